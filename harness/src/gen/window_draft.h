// Internal to the generators: the spatial part of a conv or max-pool case (extents,
// kernel, stride, dilation, padding) as drawn field by field, and its realisation as a
// valid geometry. A draft holds no invalid combination to reject: realise() derives
// the input extent from the window (the smallest extent the window and padding rules
// allow, plus a drawn `extra`), so shrinking any field keeps the case valid.
// Three dims are always drawn and `keep` says which of them the case has (its rank):
// shrinking `keep` drops a dim and leaves the others as they were, so a failure that
// needs one odd dim shrinks to rank 1 with that dim, whichever it was.
// A stack's window (op: stack) is a conv window and an optional max pool repeated over
// the depth: realise_stack() gives the input the whole depth fits in, and lowers the
// depth where no input within the caps does.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <rapidcheck.h>

#include "gen/gen.h"
#include "kc/case.h"

namespace kc::gen::detail {

enum class PadForm { kPairs, kSymmetric, kUniform, kValid, kSame, kSameLower };

struct DimDraft {
  int64_t extra = 0;  // input extent beyond the smallest that the window rules allow
  int64_t kernel = 1, stride = 1, dilation = 1, lo = 0, hi = 0;
};

struct WindowDraft {
  std::vector<DimDraft> dims;  // three, drawn within the rank-1 caps
  std::vector<size_t> keep;    // the dims the case has, in order; its size is the rank
  Caps caps;                   // to scale kept dims to the caps of the rank
  PadForm pad = PadForm::kPairs;
  PaddingMode mode = PaddingMode::kZeros;  // conv only
  bool pool = false;
  bool default_stride = false;  // pool only: stride left out, so it equals the kernel
  bool ceil_mode = false;       // pool only
};

struct Window {
  Dims spatial, kernel, stride, dilation;
  PadSpec padding;
};

rc::Gen<WindowDraft> window_draft(bool pool, const Caps& caps);
Window realise(const WindowDraft& d);

// A stack layer's max pool, per dim: small windows (kernel 1 to 3, stride 1 or 2, pads
// 0 or 1 within half the window) so that it does not erode the input too fast.
struct PoolDimDraft {
  int64_t kernel = 1, stride = 1, lo = 0, hi = 0;
};

struct StackPoolDraft {
  bool on = false;
  std::vector<PoolDimDraft> dims;  // three, kept as the conv window keeps its dims
  bool default_stride = false;     // stride left out, so it equals the kernel
  bool ceil_mode = false;
  TieRule tie = TieRule::kFirst;
};

struct StackWindow {
  int64_t depth = 1;  // the drawn depth, or less where no input within the caps fits it
  Window conv;        // conv.spatial is the stack's input
  std::optional<MaxPoolParams> pool;
};

rc::Gen<StackPoolDraft> stack_pool_draft();
// Each dim's input is the least extent from which `depth` layers leave an output of
// at least `least_out` (and every other rule satisfied), plus the `extra` the conv
// window drew. Where that least extent exceeds caps.stack_extent in some dim (a
// strided or valid layer erodes it at every layer), the depth is lowered until it
// does not; depth 1 always fits.
StackWindow realise_stack(const WindowDraft& conv, const StackPoolDraft& pool, int64_t depth, int64_t least_out);

}  // namespace kc::gen::detail
