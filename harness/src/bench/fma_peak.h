// The host's compute peak by its own hands: independent fused multiply-add chains that
// live in registers (no memory traffic), in the widest vectors the CPU has (AVX-512, else
// AVX2 with FMA, else scalar), on every core. A library's conv can beat the library's own
// GEMM; nothing beats this loop but the clock, so it bounds the FLOP/s of any kernel.
#pragma once

#include "kc/prepared_op.h"

namespace kc::bench {

// FLOP/s of f32 or f64 multiply-adds (2 FLOPs each), best of several runs; other dtypes:
// unimplemented.
StatusOr<Ceiling> measure_fma_peak(DType dtype, int threads);

}  // namespace kc::bench
