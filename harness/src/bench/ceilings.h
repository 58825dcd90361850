// The host's ceilings, measured in the same run as the kernels (docs/bench.md, "Ceilings and peers"): a
// STREAM-like triad for memory bandwidth and an Eigen GEMM per dtype for FLOP/s, both on
// every core (one thread per core, each on its own slice), each the best of several runs
// after a warm-up: a ceiling is the most the machine gave, so that a kernel's fraction of
// it stays at most 1 unless the measurement is wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/prepared_op.h"

namespace kc::bench {

// a[i] = b[i] + s c[i] over arrays of `elements` doubles each (3 x 8 bytes per element
// counted): bytes/s.
Ceiling measure_triad(int64_t elements, int reps, int threads);

// C = A B, n x n x n, in f64 or f32 (other dtypes: unimplemented): FLOP/s.
StatusOr<Ceiling> measure_eigen_gemm(DType dtype, int64_t n, int reps, int threads);

// The triad over arrays larger than the last-level cache (ceilings.cpp) and the f64
// and f32 GEMMs, on `threads` threads.
std::vector<Ceiling> measure_host_ceilings(int threads);

// The host's last-level cache in bytes (sysconf, then /sys), 32 MiB when neither says.
int64_t host_cache_bytes();
// The same, read once per process.
int64_t host_cache_bytes_cached();

}  // namespace kc::bench
