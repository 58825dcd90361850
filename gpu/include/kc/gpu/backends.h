// The built-in GPU backends (DESIGN section 7), registered by builtin_registry() when
// kernelcheck is built with CUDA:
//   cuda   our kernels (f32, f16, bf16 storage; f32 accumulation; tensor cores for
//          f16/bf16), every op and mode of DESIGN section 3;
//   cudnn  the peer: cuDNN's convolution forward/backward (zero padding, any rank 1-3,
//          groups, dilation) and inference max pooling. Built when cuDNN's headers were
//          found at configure time; libcudnn is loaded at run time, so a machine without
//          it says "cudnn: unavailable (reason)" instead of failing to start.
// Both copy host tensors to the device and back, are unavailable (with the CUDA
// runtime's reason) without a usable device, and refuse (unimplemented, with the
// reason) what they cannot run: f64 on both, reflect/replicate/circular padding and
// argmax (training-mode) pooling on cudnn.
//
// Weight gradients: a case with `deterministic: true` gets the split-K reduction in a
// fixed order (no float atomics); other cases may use atomics (cuda) or cuDNN's
// fastest algorithm. The backend learns the case's flag in supports(), which the runner
// calls before running a case; without that call it stays deterministic.
#pragma once

#include <memory>

#include "kc/backend.h"

namespace kc::gpu {

std::unique_ptr<Backend> make_cuda_backend();

#ifdef KC_HAVE_CUDNN
std::unique_ptr<Backend> make_cudnn_backend();
#endif

}  // namespace kc::gpu
