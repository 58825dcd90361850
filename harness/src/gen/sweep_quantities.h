// Internal to the boundary sweeps (boundary_sweep.h): a quantity an op's kernels branch
// or index on, and the quantity families the op modules' sweep_quantities pick from.
// Each quantity sets itself to n on the op's minimal case, every other size minimal.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "gen/boundary_sweep.h"
#include "kc/case.h"

namespace kc::gen::detail {

struct Quantity {
  BoundaryQuantity q;
  std::function<void(Case&, int64_t)> apply;
};

// Batch, extents, planes, volumes, window taps and outputs per plane, with a conv's
// channels per group, output channels and implicit-GEMM M and K.
std::vector<Quantity> conv_quantities();
// The same for a pool, with its channels.
std::vector<Quantity> pool_quantities();
// The exponents of the small counts' thresholds (batch, channels, taps, extents).
const std::vector<int>& small_counts();

}  // namespace kc::gen::detail
