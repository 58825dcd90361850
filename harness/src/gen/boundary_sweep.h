// Boundary sweeps (docs/cases.md, "Boundary sweeps"): for every quantity a kernel branches
// or indexes on, cases at 2^k - 1, 2^k and 2^k + 1 with every other dimension minimal.
// Derived from the op's parameters, never listed by hand: `kcheck gen --boundaries` writes
// them to cases/boundaries/, and a test regenerates them and fails when the files drift.
// Invariants: the sweep is a pure function of the op (no clock, no random device); every
// case is valid, named "<op> <dtype>: <quantity> 2^k<+-1> = <n>", and its data seed is
// steered (steer_seed) so that the oracle's outputs can judge a kernel.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gen/gen.h"
#include "kc/case.h"

namespace kc::gen {

// One quantity's thresholds: the exponents k of 2^k it is swept at.
struct BoundaryQuantity {
  std::string name;         // "batch", "elements per plane", "implicit GEMM M", ...
  std::vector<int> powers;  // k of each threshold 2^k
};

// The quantities of an op and their thresholds (a stack: its depth; its layers are conv
// cases, swept as such).
std::vector<BoundaryQuantity> boundary_quantities(const OpParams& op);

// The sweep of one op, or of every op (kAllOps). The dtype cycles over f32, f16, bf16 and f64 from one (quantity,
// threshold) to the next, so that each op meets every dtype at every size class, and
// the three cases of a threshold share one dtype (the step shows, not a dtype change).
std::vector<Case> boundary_sweep(const OpSet& ops);

// The same cases before their data is chosen: each with the sweep's dtype, a random fill
// and a seed of its name, not checked on the oracle (cheap: the fuzzer draws from them
// and steers the seed in its worker).
std::vector<Case> boundary_shapes(const OpSet& ops);

// The fuzzer's boundary phase: a case of boundary_shapes(ops), with `fill: boundary`
// (where options.data allows NaN and infinities) or its random fill, a drawn seed
// (steered where options.steer) and `deterministic: true` one time in four.
rc::Gen<Case> boundary_case(const OpSet& ops, const Options& options = {});

// What `kcheck fuzz` draws: valid_case, and one case in eight from boundary_case.
rc::Gen<Case> fuzz_case(const OpSet& ops, const Options& options = {});

// n = a * b with a <= b and a the largest divisor of n at most sqrt(n).
std::array<int64_t, 2> near_square_factors(int64_t n);
// n = a * b * c, a the largest divisor at most cbrt(n), then b * c = near_square_factors.
std::array<int64_t, 3> near_cube_factors(int64_t n);

}  // namespace kc::gen
