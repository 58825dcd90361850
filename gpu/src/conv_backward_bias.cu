// Convolution backward-bias: db[c] = sum of dy[n, c, o] over batch and positions. One
// block per channel; each thread sums a fixed strided share, then a fixed-shape tree in
// shared memory: no atomics, the same order on every run (deterministic).
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;
using detail::to_f32;

constexpr int kThreads = 256;

template <class T>
__global__ void __launch_bounds__(kThreads)
    bias_grad_kernel(const T* __restrict__ dy, int batch, int channels, int out_count, T* __restrict__ db) {
  __shared__ float part[kThreads];
  const int c = static_cast<int>(blockIdx.x);
  const long long total = static_cast<long long>(batch) * out_count;
  float sum = 0.f;
  for (long long e = threadIdx.x; e < total; e += kThreads) {
    const long long n = e / out_count, o = e - n * out_count;
    sum += to_f32(dy[(n * channels + c) * out_count + o]);
  }
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[c] = from_f32<T>(part[0]);
}

}  // namespace

Status launch_conv_backward_bias(DType dtype, const ConvShape& s, const void* dy, void* db) {
  return detail::dispatch_dtype(dtype, "conv backward-bias", [&](auto tag) {
    using T = typename decltype(tag)::type;
    bias_grad_kernel<T><<<static_cast<unsigned>(s.out_channels), kThreads, 0, detail::launch_stream()>>>(
        static_cast<const T*>(dy), s.batch, s.out_channels, s.out_count(), static_cast<T*>(db));
    return detail::launch_status("conv backward-bias");
  });
}

}  // namespace kc::gpu
