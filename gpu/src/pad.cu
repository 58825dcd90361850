// Pre-padding for the non-zero padding modes (pad_map.h): xp[p] = x[source(p)], and the
// fold that takes the padded gradient back: dx[i] = sum of dxp over the padded
// positions that copy i, visited in ascending order per dim (deterministic, no atomics).
// The padded gradient arrives in f32 so that only the final sum is rounded.
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;

constexpr int kThreads = 256;

template <class T>
__global__ void pad_kernel(PadShape p, const T* __restrict__ x, T* __restrict__ xp) {
  const long long total = static_cast<long long>(p.planes) * p.padded_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const long long plane = e / p.padded_count();
    int pos[3];
    unflatten3(static_cast<int>(e - plane * p.padded_count()), p.padded, pos);
    int flat = 0;
    bool inside = true;
    for (int d = 0; d < 3; ++d) {
      const int src = pad_source(p.mode, pos[d], p.in[d], p.lo[d]);
      inside = inside && src >= 0;
      flat = flat * p.in[d] + (src >= 0 ? src : 0);
    }
    xp[e] = inside ? x[plane * p.in_count() + flat] : from_f32<T>(0.f);
  }
}

template <class T>
__global__ void fold_kernel(PadShape p, const float* __restrict__ dxp, T* __restrict__ dx) {
  const long long total = static_cast<long long>(p.planes) * p.in_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const long long plane = e / p.in_count();
    int i[3];
    unflatten3(static_cast<int>(e - plane * p.in_count()), p.in, i);
    const PadRanges r0 = pad_copies_of(p.mode, i[0], p.in[0], p.lo[0], p.padded[0]);
    const PadRanges r1 = pad_copies_of(p.mode, i[1], p.in[1], p.lo[1], p.padded[1]);
    const PadRanges r2 = pad_copies_of(p.mode, i[2], p.in[2], p.lo[2], p.padded[2]);
    const float* src = dxp + plane * p.padded_count();
    float sum = 0.f;
    for (int a = 0; a < r0.count; ++a)
      for (int p0 = r0.begin[a]; p0 < r0.end[a]; ++p0)
        for (int b = 0; b < r1.count; ++b)
          for (int p1 = r1.begin[b]; p1 < r1.end[b]; ++p1)
            for (int c = 0; c < r2.count; ++c)
              for (int p2 = r2.begin[c]; p2 < r2.end[c]; ++p2) sum += src[(p0 * p.padded[1] + p1) * p.padded[2] + p2];
    dx[e] = from_f32<T>(sum);
  }
}

}  // namespace

Status launch_pad(DType dtype, const PadShape& p, const void* x, void* xp) {
  return detail::dispatch_dtype(dtype, "pad", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const long long total = static_cast<long long>(p.planes) * p.padded_count();
    pad_kernel<T><<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(
        p, static_cast<const T*>(x), static_cast<T*>(xp));
    return detail::launch_status("pad");
  });
}

Status launch_pad_fold(DType dtype, const PadShape& p, const float* dxp, void* dx) {
  return detail::dispatch_dtype(dtype, "pad fold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const long long total = static_cast<long long>(p.planes) * p.in_count();
    fold_kernel<T>
        <<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(p, dxp, static_cast<T*>(dx));
    return detail::launch_status("pad fold");
  });
}

}  // namespace kc::gpu
