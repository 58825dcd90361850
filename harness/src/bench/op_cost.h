// What one bench op of a case costs: the op's module says (ops/op_module.h: FLOPs
// and compulsory bytes by the definition, indices at their smallest width, so that the
// bytes stay a lower bound for any kernel's format and GB/s an honest rate); and what a
// transform algorithm saves on multiplications.
#pragma once

#include <cstdint>

#include "backend/invoke.h"
#include "kc/numerics.h"
#include "ops/op_module.h"

namespace kc::bench {

using kc::OpCost;

// The op's own cost, from its module (ops/op_module.h); zero for a call the op
// does not have.
OpCost op_cost(const OpGeometry& g, DType dtype, BenchOp op);

// The most a transform algorithm saves on multiplications against the direct definition
// over `rank` spatial dims: Winograd F(m, r) computes m outputs of an r-tap filter with
// m + r - 1 multiplications instead of m r, per dim. 1 for direct sums; FFT and other
// transforms have no fixed figure and get 1 (their fraction may then exceed 1 honestly:
// docs/bench.md says so).
double transform_saving(const Numerics& n, int64_t rank);

}  // namespace kc::bench
