// Input data for a case: the fill named by `data.fill`, seeded by `data.seed`, the
// `data.zero` regions set to 0 in it, then any inline `tensors:` in place of the filled
// ones (a region never touches inline data); everything rounded to the dtype.
//   random:  uniform in [-1, 1)
// More on the method: docs/notes.md, section harness/src/core/fill.h.
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
