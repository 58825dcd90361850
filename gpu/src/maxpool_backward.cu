// Max-pool backward as a deterministic gather (pool_shape.h): one thread per input
// element visits the windows that could contain it, in ascending output order, and adds
// dy of each whose stored offset points at it. Overlapping windows add; no atomics.
//
// Speed work: for non-overlapping windows (stride >= extent) a scatter by the output
// thread is equally deterministic and reads dy once.
#include <cstdint>

#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;
using detail::to_f32;

constexpr int kThreads = 256;

__device__ __forceinline__ int load_offset(const void* offsets, int bytes, long long e) {
  return bytes == 1 ? static_cast<const uint8_t*>(offsets)[e] : static_cast<const uint16_t*>(offsets)[e];
}

template <class T>
__global__ void maxpool_backward_kernel(PoolShape s, const T* __restrict__ dy, const void* offsets, int offset_bytes,
                                        T* __restrict__ dx) {
  const long long total = static_cast<long long>(s.planes) * s.in_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const long long plane = e / s.in_count();
    const long long base = plane * s.out_count();
    int i[3];
    unflatten3(static_cast<int>(e - plane * s.in_count()), s.in, i);
    float sum = 0.f;
    for_each_window_of(s, i, [&](int o, int k) {
      if (load_offset(offsets, offset_bytes, base + o) == k) sum += to_f32(dy[base + o]);
    });
    dx[e] = from_f32<T>(sum);
  }
}

}  // namespace

Status launch_maxpool_backward(DType dtype, const PoolShape& s, const void* dy, const void* offsets, int offset_bytes,
                               void* dx) {
  if (offsets == nullptr) {
    return failed_precondition("maxpool backward needs the argmax offsets of a training-mode forward");
  }
  if (offset_bytes != 1 && offset_bytes != 2) {
    return invalid_argument("maxpool backward: offset_bytes must be 1 or 2, not " + std::to_string(offset_bytes));
  }
  return detail::dispatch_dtype(dtype, "maxpool backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const long long total = static_cast<long long>(s.planes) * s.in_count();
    maxpool_backward_kernel<T><<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(
        s, static_cast<const T*>(dy), offsets, offset_bytes, static_cast<T*>(dx));
    return detail::launch_status("maxpool backward");
  });
}

}  // namespace kc::gpu
