// Internal to the generators: "threshold" cases, whose one or two large sizes sit at
// the powers of two where real kernels switch code paths, drawn from {2^k - 1, 2^k,
// 2^k + 1}: the batch (k 3 to 5), channel counts (in or out per group, depthwise groups
// or multiplier, a max pool's channels: k 5 to 8), one output extent (k 3 to 7), a max
// pool window past 256 taps (a 1-D window of 255 to 257, a global 2-D pool of 15x15 to
// 17x17). The other sizes are drawn small (threshold_caps) and cut further where the
// case would cost the reference more than Caps::threshold_cost (see threshold.cpp).
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "gen/gen.h"
#include "kc/case.h"

namespace kc::gen::detail {

struct ThresholdDraft {
  int64_t first = 0, second = 0;                       // axes, taken modulo the op's axes; second == first: one axis
  int64_t two = 0;                                     // 1: a second axis
  std::array<int64_t, 2> k = {0, 0}, offset = {1, 1};  // exponent index and {-1, 0, +1} index
  int64_t dim = 0;                                     // the spatial dim an extent axis sets, modulo the rank
  int64_t window = 0;                                  // max pool window: 0 a 1-D window, 1 a global 2-D pool
};

rc::Gen<ThresholdDraft> threshold_draft();

// The caps for the sizes a threshold case keeps small.
Caps threshold_caps(const Caps& caps);

// `c` (valid, drawn with threshold_caps) with the draft's large sizes, valid and within
// caps.threshold_cost where its small sizes can be cut that far; `c` itself where no
// large size fits.
Case apply_threshold(const Case& c, const ThresholdDraft& d, const Caps& caps);

// The reference's cost of checking a case, in the units of Caps::threshold_cost (about
// a microsecond on one core): the oracle runs its checks make (gradcheck's dominate:
// one per input element on a small case), each a fixed cost plus its loops over
// samples and groups, its tensors and its multiply-adds, and the checks' own passes
// over the tensors. Fitted to measured times within a factor of 2, erring high.
int64_t threshold_cost_of(const Case& c);

}  // namespace kc::gen::detail
