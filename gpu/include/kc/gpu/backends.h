// The built-in GPU backends (docs/performance.md, "GPU"), registered by builtin_registry() when
// kernelcheck is built with CUDA:
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
