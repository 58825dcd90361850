// Storage types of the kernels and the launch-error helpers every .cu file shares.
// Storage is f32, f16 (__half) or bf16 (__nv_bfloat16); arithmetic is always f32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "kc/dtype.h"
#include "kc/status.h"

namespace kc::gpu::detail {

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the storage type of `dtype`; f64 has no kernels.
template <class F>
Status dispatch_dtype(DType dtype, const char* what, F&& f) {
  switch (dtype) {
    case DType::kF32:
      return f(Tag<float>{});
    case DType::kF16:
      return f(Tag<__half>{});
    case DType::kBF16:
      return f(Tag<__nv_bfloat16>{});
    default:
      break;
  }
  return unimplemented(std::string(what) + ": no kernel for dtype " + std::string(dtype_name(dtype)) +
                       " (the cuda kernels store f32, f16 or bf16)");
}

// A CUDA error as a Status: out of memory is resource_exhausted, anything else internal.
inline Status cuda_status(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return ok_status();
  const std::string msg = what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return e == cudaErrorMemoryAllocation ? resource_exhausted(msg) : internal_error(msg);
}

// The stream every launch wrapper queues on: the innermost StreamScope's of this
// thread (stream.h), else the default stream.
cudaStream_t launch_stream();

// After a <<<...>>> launch: a bad configuration or an earlier asynchronous fault.
inline Status launch_status(const char* kernel) {
  return cuda_status(cudaGetLastError(), std::string(kernel) + " launch");
}

// Blocks for a 1-D grid-stride launch over `count` items (at least one block).
inline unsigned int blocks_for(long long count, int threads) {
  const long long b = (count + threads - 1) / threads;
  constexpr long long kCap = 1LL << 20;  // grid-stride loops cover the rest
  return static_cast<unsigned int>(b < 1 ? 1 : (b > kCap ? kCap : b));
}

}  // namespace kc::gpu::detail
