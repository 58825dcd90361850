// The CPU's GEMM ceilings as oneDNN reaches them (kc::Ceiling): a square matmul in f32,
// bf16 and f16, each sized so that one multiply takes about 100 ms, timed best of
// several runs after a warm-up. A dtype oneDNN refuses (or runs only by its reference
// implementation, which is no ceiling) is left out. Measured once per process: the three
// peers report the same list.
#pragma once

#include <vector>

#include "kc/prepared_op.h"
#include "kc/status.h"

namespace kc::onednn {

StatusOr<std::vector<Ceiling>> gemm_ceilings();

}  // namespace kc::onednn
