// The built-in GPU backends (docs/performance.md, "GPU"), registered by builtin_registry() when
// kernelcheck is built with CUDA:
//   cuda   our kernels (f32, f16, bf16 storage; f32 accumulation; tensor cores for
//          f16/bf16), every op and mode of docs/ops.md;
//   cudnn  the peer: cuDNN's convolution forward/backward and inference max pooling,
//          libcudnn loaded at run time ("cudnn: unavailable (reason)" without it).
// Both copy host tensors to the device and back, are unavailable (with the CUDA
// runtime's reason) without a usable device, and refuse (unimplemented, with the
// reason) what they cannot run.
// More on the method: docs/notes.md, section gpu/include/kc/gpu/backends.h.
#pragma once

#include <memory>

#include "kc/backend.h"

namespace kc::gpu {

std::unique_ptr<Backend> make_cuda_backend();

#ifdef KC_HAVE_CUDNN
std::unique_ptr<Backend> make_cudnn_backend();
#endif

}  // namespace kc::gpu
