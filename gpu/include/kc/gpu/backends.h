// The built-in GPU backends (docs/performance.md, "GPU"), registered by builtin_registry() when
// kernelcheck is built with CUDA:
//   cuda         our kernels (f32, f16, bf16 storage; f32 accumulation; tensor cores for
//                f16/bf16), every op and mode of docs/ops.md; the zero-padded conv passes
//                CUTLASS's kernels accept run on them (docs/architecture.md, "CUTLASS");
//   cuda.direct  the same without CUTLASS: our direct kernels for every pass;
//   cudnn  the peer: cuDNN's convolution forward/backward and inference max pooling,
//          libcudnn loaded at run time ("cudnn: unavailable (reason)" without it).
// Both copy host tensors to the device and back, are unavailable (with the CUDA
// runtime's reason) without a usable device, and refuse (unimplemented, with the
// reason) what they cannot run.
// More on the method: docs/notes.md, section gpu/include/kc/gpu/backends.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kc/backend.h"
#include "kc/case.h"

namespace kc::gpu {

std::unique_ptr<Backend> make_cuda_backend();
std::unique_ptr<Backend> make_cuda_direct_backend();

// What cuda and cuda.direct would run for c, one line per engine and conv pass
// ("cuda: forward: cutlass fprop bf16 128x128x64, 3 stages", "cuda: backward data:
// direct: channels 3 not a multiple of 8 (...)"), decided on the host without a device.
std::vector<std::string> cuda_kernel_plan(const Case& c);

#ifdef KC_HAVE_CUDNN
std::unique_ptr<Backend> make_cudnn_backend();
#endif

}  // namespace kc::gpu
