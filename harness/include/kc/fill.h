// Input data for a case: the fill named by `data.fill`, seeded by `data.seed`, then
// any inline `tensors:` in place of the filled ones; everything rounded to the dtype.
//   random:  uniform in [-1, 1)
//   normal:  standard normal
//   integer: small integers with a density chosen so that every sum the op and its
//            backward form (forward, dx, dw, db; padding copies included) is an integer
//            within the dtype's exact range, so `tolerance: exact` can demand bitwise equality
//   ties:    values from a set of four, so pool windows hold many equal maxima
//   special: random values with NaN, +-inf, +-0 and subnormals mixed in (x only)
// Element i of a tensor is a pure function of (seed, tensor, i): the same seed gives
// the same data whatever the thread count or the order of generation.
#pragma once

#include <cstdint>

#include "kc/case.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

struct OpInputs {
  Tensor x;   // [N, C, in...]
  Tensor w;   // conv only: [Cout, Cin/G, k...]
  Tensor b;   // conv with bias: [Cout]
  Tensor dy;  // the cotangent for the backward pass: [N, Cout or C, out...]
};

// The case must be valid (validate.h); returns its error otherwise.
StatusOr<OpInputs> make_inputs(const Case& c);

// The counter-based generator behind the fills: a uniform double in [0, 1) from
// (seed, stream, index) through splitmix64.
double uniform01(uint64_t seed, uint64_t stream, uint64_t index);

}  // namespace kc
