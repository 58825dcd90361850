// Convolution forward (and the fused conv + bias + relu) as an implicit GEMM
// (igemm.cuh, ForwardMap). The epilogue adds the bias in f32 and applies the relu, or,
// for the fused backward, turns the recomputed pre-activation z into the masked
// cotangent z > 0 ? dy : 0 so that no relu mask is ever stored.
#include "igemm.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;
using detail::to_f32;

template <class T>
struct ForwardEpilogue {
  ForwardMap map;
  T* out;
  const T* bias;  // null: no bias
  const T* dy;    // kReluMaskGrad only
  ConvEpilogue mode;

  __device__ void operator()(int g, int m, int n, float acc, int /*split*/) const {
    const int idx = map.c_index(g, m, n);
    const float z = bias ? acc + to_f32(bias[map.c_channel(g, n)]) : acc;
    if (mode == ConvEpilogue::kReluMaskGrad) {
      out[idx] = z > 0.f ? dy[idx] : from_f32<T>(0.f);
    } else if (mode == ConvEpilogue::kStoreRelu) {
      out[idx] = from_f32<T>(z > 0.f || z != z ? z : 0.f);  // NaN propagates, relu(-0) = +0
    } else {
      out[idx] = from_f32<T>(z);
    }
  }
};

}  // namespace

Status launch_conv_forward(DType dtype, const ConvShape& s, const void* x, const void* w, const void* bias,
                           ConvEpilogue epilogue, const void* dy, void* out) {
  if (epilogue == ConvEpilogue::kReluMaskGrad && dy == nullptr) {
    return invalid_argument("launch_conv_forward: the relu mask epilogue needs dy");
  }
  return detail::dispatch_dtype(dtype, "conv forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ForwardMap map{s};
    const ForwardEpilogue<T> epi{map, static_cast<T*>(out), static_cast<const T*>(bias), static_cast<const T*>(dy),
                                 epilogue};
    return detail::run_igemm(map, static_cast<const T*>(x), static_cast<const T*>(w), epi, s.groups, "conv forward");
  });
}

}  // namespace kc::gpu
