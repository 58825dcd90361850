// The values of `fill: boundary` (docs/cases.md, "Fills"): for each dtype its largest
// finite value, the half-ulp offsets that put a sum with it just below and at the
// round-to-max threshold, its smallest normal, its largest and smallest subnormals, both
// zeros, the ingredients of exact ties (2^p + 1 with 0.5 and 1.5), ones, and the
// infinities and NaN. Every value is exactly representable in its dtype, so the harness's
// own rounding of the fill changes none of them: the boundaries a kernel meets are those
// of its own conversions and sums.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kc/dtype.h"

namespace kc {

struct BoundaryValue {
  std::string name;  // what the value is, for messages and tests ("largest subnormal")
  double value;
};

// The finite boundary values of a dtype, each once (docs/cases.md lists them).
std::vector<BoundaryValue> finite_boundary_values(DType dtype);

// Element `index` of tensor stream `stream` under fill: boundary: 1.5% non-finite
// (+inf, -inf, NaN: rare enough that most sums stay finite), 45% one of finite_boundary_values(dtype), the rest uniform
// in
// [-1, 1). A pure function of its arguments, as every fill is.
double boundary_element(uint64_t seed, uint64_t stream, uint64_t index, DType dtype);

}  // namespace kc
