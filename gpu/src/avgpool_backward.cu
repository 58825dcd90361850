// Average-pool backward as a deterministic gather (pool_shape.h, AvgPoolShape): one
// thread per input element visits the windows that read it, in ascending output order,
// and adds dy / divisor of each in f32 (avg_input_grad). Overlapping windows add in that
// fixed order; no atomics, so dx is bitwise repeatable.
//
// Speed work: for non-overlapping windows (stride >= kernel) each element has one
// window, and a thread per output could write its whole window instead.
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;
using detail::to_f32;

constexpr int kThreads = 256;

template <class T>
__global__ void avgpool_backward_kernel(AvgPoolShape s, const T* __restrict__ dy, T* __restrict__ dx) {
  const long long total = static_cast<long long>(s.planes) * s.in_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const long long plane = e / s.in_count();
    int i[3];
    unflatten3(static_cast<int>(e - plane * s.in_count()), s.in, i);
    const T* dyp = dy + plane * s.out_count();
    dx[e] = from_f32<T>(avg_input_grad(s, i, [&](int o) { return to_f32(dyp[o]); }));
  }
}

}  // namespace

Status launch_avgpool_backward(DType dtype, const AvgPoolShape& s, const void* dy, void* dx) {
  return detail::dispatch_dtype(dtype, "avgpool backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const long long total = static_cast<long long>(s.planes) * s.in_count();
    avgpool_backward_kernel<T><<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(
        s, static_cast<const T*>(dy), static_cast<T*>(dx));
    return detail::launch_status("avgpool backward");
  });
}

}  // namespace kc::gpu
