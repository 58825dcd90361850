// The GPU's ceilings for `kcheck bench` (docs/bench.md, "Ceilings and peers"; kc/prepared_op.h): the
// device-to-device copy's bandwidth (bytes read plus bytes written) and cuBLAS GEMM
// FLOP/s in f32 (no TF32), f16 and bf16 (tensor cores, f32 accumulation) and f64, each
// the best of several runs timed by CUDA events. Measured once per process (the cuda and
// cudnn backends return the same list; the bench keeps one per name).
#pragma once

#include <vector>

#include "kc/prepared_op.h"
#include "kc/status.h"

namespace kc::gpu {

// unavailable without a device. A GEMM that cannot run (no cuBLAS, too little memory)
// is left out, with its reason in gpu_ceiling_notes(); the copy alone still counts.
StatusOr<std::vector<Ceiling>> measure_gpu_ceilings();

// Why ceilings were left out of the last measurement ("cublas gemm f64: ..."), or empty.
std::vector<std::string> gpu_ceiling_notes();

}  // namespace kc::gpu
