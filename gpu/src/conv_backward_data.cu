// Convolution backward-data as an implicit GEMM (igemm.cuh, BackwardDataMap): each dx
// element is one dot product over the (output channel, kernel tap) pairs whose window
// covered it. A gather, so no atomics and a fixed order (deterministic). With a
// non-zero padding mode the result is the padded gradient, kept in f32 for the fold.
#include "igemm.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;

template <class T>
struct BackwardDataEpilogue {
  BackwardDataMap map;
  void* dx;
  bool dx_f32;  // the padded gradient: no rounding to the storage type before the fold

  __device__ void operator()(int g, int m, int n, float acc, int /*split*/) const {
    const int idx = map.c_index(g, m, n);
    if (dx_f32) {
      static_cast<float*>(dx)[idx] = acc;
    } else {
      static_cast<T*>(dx)[idx] = from_f32<T>(acc);
    }
  }
};

}  // namespace

Status launch_conv_backward_data(DType dtype, const ConvShape& s, const void* dy, const void* w, void* dx,
                                 bool dx_f32) {
  return detail::dispatch_dtype(dtype, "conv backward-data", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const BackwardDataMap map{s};
    const BackwardDataEpilogue<T> epi{map, dx, dx_f32};
    return detail::run_igemm(map, static_cast<const T*>(dy), static_cast<const T*>(w), epi, s.groups,
                             "conv backward-data");
  });
}

}  // namespace kc::gpu
