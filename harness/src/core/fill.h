// Input data for a case: the fill named by `data.fill`, seeded by `data.seed`, the
// `data.zero` regions set to 0 in it, then any inline `tensors:` in place of the filled
// ones (a region never touches inline data); everything rounded to the dtype.
//   random:  uniform in [-1, 1)
//   normal:  standard normal
//   integer: small integers with a density chosen so that every sum the op and its
//            backward form (forward, dx, dw, db; padding copies included) is an integer
//            within the dtype's exact range, so `tolerance: exact` can demand bitwise equality
//   ties:    values from a set of four, so pool windows hold many equal maxima
//   special: random values with NaN, +-inf, +-0 and subnormals mixed in (x only)
//   boundary: the dtype's boundary values (core/boundary_values.h) mixed into uniform
//            values, in x, w, b and dy
// Element i of a tensor is a pure function of (seed, tensor, i): the same seed gives
// the same data whatever the thread count or the order of generation.
#pragma once

#include <cstdint>

#include "kc/case.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

// The case must be valid (validate.h); returns its error otherwise.
StatusOr<OpInputs> make_inputs(const Case& c);

// The counter-based generator behind the fills: a uniform double in [0, 1) from
// (seed, stream, index) through splitmix64.
double uniform01(uint64_t seed, uint64_t stream, uint64_t index);

}  // namespace kc
