// Max-pool forward, inference and training (pool_shape.h). One thread per output scans
// its window in row-major kernel order and keeps the choice rule of docs/ops.md
// (pool_replaces): NaN wins, ties by `first`/`last`, padding never selected. y is the
// chosen element itself (exact in every dtype); training also stores the chosen tap's
// offset inside the window (1 or 2 bytes), expanded to int64 only at the interface.
//
// Speed work: a block per output tile with the input halo staged in shared memory, and
// vectorised loads along W; the scan order and the rule must stay as they are.
#include <cstdint>

#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::to_f32;

constexpr int kThreads = 256;

__device__ __forceinline__ void store_offset(void* offsets, int bytes, long long e, int value) {
  if (bytes == 1) {
    static_cast<uint8_t*>(offsets)[e] = static_cast<uint8_t>(value);
  } else {
    static_cast<uint16_t*>(offsets)[e] = static_cast<uint16_t>(value);
  }
}

template <class T>
__global__ void maxpool_forward_kernel(PoolShape s, bool tie_last, const T* __restrict__ x, T* __restrict__ y,
                                       void* offsets, int offset_bytes) {
  const long long total = static_cast<long long>(s.planes) * s.out_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const long long plane = e / s.out_count();
    int o[3];
    unflatten3(static_cast<int>(e - plane * s.out_count()), s.out, o);
    const T* xp = x + plane * s.in_count();
    bool have = false;
    float best = 0.f;
    int best_tap = -1, best_k = offset_sentinel(offset_bytes);
    for (int kk = 0; kk < s.kernel_count(); ++kk) {
      int k[3];
      unflatten3(kk, s.kernel, k);
      const int i = s.tap(o, k);
      if (i < 0) continue;  // padding: -inf, never selected
      const float v = to_f32(xp[i]);
      if (pool_replaces(have, best, v, tie_last)) {
        have = true;
        best = v;
        best_tap = i;
        best_k = kk;
      }
    }
    // Validation guarantees an input tap in every window; without one y stays NaN and
    // the offset the sentinel, which the integrity check reports as never written.
    y[e] = have ? xp[best_tap] : detail::from_f32<T>(__int_as_float(0x7fc00000));
    if (offsets) store_offset(offsets, offset_bytes, e, best_k);
  }
}

}  // namespace

Status launch_maxpool_forward(DType dtype, const PoolShape& s, bool tie_last, const void* x, void* y, void* offsets,
                              int offset_bytes) {
  if (offsets && offset_bytes != 1 && offset_bytes != 2) {
    return invalid_argument("maxpool forward: offset_bytes must be 1 or 2, not " + std::to_string(offset_bytes));
  }
  return detail::dispatch_dtype(dtype, "maxpool forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const long long total = static_cast<long long>(s.planes) * s.out_count();
    maxpool_forward_kernel<T><<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(
        s, tie_last, static_cast<const T*>(x), static_cast<T*>(y), offsets, offset_bytes);
    return detail::launch_status("maxpool forward");
  });
}

}  // namespace kc::gpu
