// Average-pool forward (pool_shape.h, AvgPoolShape). One thread per output sums its
// window's input elements in row-major order in f32 and divides once by the window's
// divisor (avg_window_mean): the given divisor, else the window clipped to the padded
// input (count_include_pad) or to the input. Padding adds nothing, so it is never read.
//
// Speed work: a block per output tile with the input halo staged in shared memory, or
// separable row then column sums; the sum order would change with them.
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;
using detail::to_f32;

constexpr int kThreads = 256;

template <class T>
__global__ void avgpool_forward_kernel(AvgPoolShape s, const T* __restrict__ x, T* __restrict__ y) {
  const long long total = static_cast<long long>(s.planes) * s.out_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const long long plane = e / s.out_count();
    int o[3];
    unflatten3(static_cast<int>(e - plane * s.out_count()), s.out, o);
    const T* xp = x + plane * s.in_count();
    y[e] = from_f32<T>(avg_window_mean(s, o, [&](int i) { return to_f32(xp[i]); }));
  }
}

}  // namespace

Status launch_avgpool_forward(DType dtype, const AvgPoolShape& s, const void* x, void* y) {
  return detail::dispatch_dtype(dtype, "avgpool forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const long long total = static_cast<long long>(s.planes) * s.out_count();
    avgpool_forward_kernel<T><<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(
        s, static_cast<const T*>(x), static_cast<T*>(y));
    return detail::launch_status("avgpool forward");
  });
}

}  // namespace kc::gpu
