// Internal to the generators: the zero region of a generated case (`data: zero:`,
// ZeroRegion in kc/case.h), drawn before the case's sizes are known and realised on
// them: a whole sample, a plane or a channel of x, a plane or a tile of dy. Shrinking
// turns it off first (a reproducer without a region is simpler), then moves the kind
// toward a sample of x and every index toward 0.
#pragma once

#include <cstdint>
#include <vector>

#include <rapidcheck.h>

#include "kc/case.h"

namespace kc::gen::detail {

enum class ZeroKind { kXSample, kXPlane, kXChannel, kDyPlane, kDyTile };

struct ZeroDraft {
  bool on = false;
  ZeroKind kind = ZeroKind::kXSample;
  int64_t sample = 0, channel = 0;  // taken modulo the tensor's extents
  std::vector<int64_t> tile;        // per spatial dim (3): lo and length, modulo the extent
};

// On about `percent` in 100 draws.
rc::Gen<ZeroDraft> zero_draft(uint64_t percent);

// The draft's region in the valid case `c`, or none where it is off. A kind that would
// cover the whole of its tensor (a sample of a batch of 1, the only channel, a tile of
// every output: all-zero data judges nothing) or lie on an inline x (inline data wins)
// gives way to the next kind that fits; none fits a case with one output element and
// one plane of x (or an inline x).
std::vector<ZeroRegion> realise_zero(const ZeroDraft& d, const Case& c);

}  // namespace kc::gen::detail
