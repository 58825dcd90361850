// Channels-first <-> channels-last copies for the CUTLASS engine (layout_map.h): NCDHW
// -> NDHWC activations and [K, C/G, T, R, S] -> KTRSC filters before its kernels, and the
// way back for what they write. A copy of elements, no arithmetic: bitwise the same
// values, NaN payloads included; except the f32 weight gradient's way back, rounded once
// to the storage dtype. Each thread writes one element of the destination, read
// through the inverse map (coalesced stores).
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"
#include "kc/gpu/layout_map.h"

namespace kc::gpu {
namespace {

constexpr int kThreads = 256;

template <class T, bool kToLast>
__global__ void layout_kernel(LayoutShape s, const T* __restrict__ src, T* __restrict__ dst) {
  const long long total = s.size();
  for (long long j = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; j < total;
       j += static_cast<long long>(gridDim.x) * kThreads) {
    dst[j] = src[kToLast ? channels_first_index(s, j) : channels_last_index(s, j)];
  }
}

template <bool kToLast>
Status launch_layout(DType dtype, const LayoutShape& s, const void* src, void* dst, const char* what) {
  return detail::dispatch_dtype(dtype, what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    layout_kernel<T, kToLast><<<detail::blocks_for(s.size(), kThreads), kThreads, 0, detail::launch_stream()>>>(
        s, static_cast<const T*>(src), static_cast<T*>(dst));
    return detail::launch_status(what);
  });
}

// dw summed in f32 channels-last to the storage dtype channels-first: one rounding.
template <class T>
__global__ void rounded_first_kernel(LayoutShape s, const float* __restrict__ src, T* __restrict__ dst) {
  const long long total = s.size();
  for (long long j = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; j < total;
       j += static_cast<long long>(gridDim.x) * kThreads) {
    dst[j] = detail::from_f32<T>(src[channels_last_index(s, j)]);
  }
}

}  // namespace

Status launch_to_channels_first_rounded(DType dtype, const LayoutShape& s, const float* src, void* dst) {
  return detail::dispatch_dtype(dtype, "f32 to channels-first", [&](auto tag) {
    using T = typename decltype(tag)::type;
    rounded_first_kernel<T><<<detail::blocks_for(s.size(), kThreads), kThreads, 0, detail::launch_stream()>>>(
        s, src, static_cast<T*>(dst));
    return detail::launch_status("f32 to channels-first");
  });
}

Status launch_to_channels_last(DType dtype, const LayoutShape& s, const void* src, void* dst) {
  return launch_layout<true>(dtype, s, src, dst, "to channels-last");
}

Status launch_to_channels_first(DType dtype, const LayoutShape& s, const void* src, void* dst) {
  return launch_layout<false>(dtype, s, src, dst, "to channels-first");
}

}  // namespace kc::gpu
