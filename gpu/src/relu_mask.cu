// launch_relu_mask_channels_last (kernels.h): the fused op's backward on the CUTLASS path
// masks dy by relu' of the pre-activation z + b, formed in f32 as the forward's epilogue
// forms it (one rounding of the f32 sum and the bias) and never rounded to the storage
// dtype, so that the mask is the forward's decision: dz = z + b > 0 ? dy : 0 (relu'(0) =
// relu'(NaN) = 0, as the direct kernels' kReluMaskGrad). Channels-last: channel = j % K.
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void relu_mask_kernel(long long count, long long channels, const float* __restrict__ z,
                                 const T* __restrict__ bias, T* __restrict__ dy) {
  for (long long j = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; j < count;
       j += static_cast<long long>(gridDim.x) * kThreads) {
    const float b = bias != nullptr ? detail::to_f32(bias[j % channels]) : 0.0f;
    if (!(z[j] + b > 0.0f)) dy[j] = detail::from_f32<T>(0.0f);
  }
}

}  // namespace

Status launch_relu_mask_channels_last(DType dtype, int64_t count, int64_t channels, const float* z, const void* bias,
                                      void* dy) {
  return detail::dispatch_dtype(dtype, "relu mask", [&](auto tag) {
    using T = typename decltype(tag)::type;
    relu_mask_kernel<T><<<detail::blocks_for(count, kThreads), kThreads, 0, detail::launch_stream()>>>(
        count, channels, z, static_cast<const T*>(bias), static_cast<T*>(dy));
    return detail::launch_status("relu mask");
  });
}

}  // namespace kc::gpu
