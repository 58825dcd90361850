// Zero regions of case data (`data: zero:`, DataSpec in kc/case.h): checking them
// against the shapes of the case's inputs, and setting them to exactly 0 in a filled
// tensor. A region addresses a tensor laid out [A, B, spatial...]: x and dy as
// [N, C, ...], w as [Cout, Cin/G, k...].
#pragma once

#include <string_view>
#include <vector>

#include "kc/case.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

// The shapes of the inputs a region may name; empty where the op has no such tensor
// (a max pool has no w).
struct ZeroShapes {
  Dims x, w, dy;
};

// Every region within its tensor: sample and channel in range, one [lo, hi) per
// spatial dim with 0 <= lo < hi <= extent. Errors name the field ("data.zero[1].box[0]")
// and the rule; `op` names the op for a tensor it lacks.
Status check_zero_regions(const std::vector<ZeroRegion>& zero, const ZeroShapes& shapes, std::string_view op);

// Sets the elements of `t` that `r` covers to +0. The region must have passed
// check_zero_regions against t's shape.
void apply_zero_region(Tensor& t, const ZeroRegion& r);

}  // namespace kc
