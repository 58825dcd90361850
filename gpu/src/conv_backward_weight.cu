// Convolution backward-weight as an implicit GEMM (igemm.cuh, BackwardWeightMap): dw is
// a sum over batch x output positions (the weight-share accumulation), a long K that is
// split so that enough blocks run. Two ways to combine the splits:
//   deterministic: split s writes its partial tile to workspace[s], then one thread per
//                  weight sums the partials in split order: no float atomics, the same
//                  bits on every run;
//   otherwise:     splits atomicAdd into one f32 accumulator (zeroed first), then it is
//                  rounded to the storage type; the order varies between runs.
#include "igemm.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

using detail::from_f32;

struct BackwardWeightEpilogue {
  BackwardWeightMap map;
  float* workspace;
  long long w_size;
  bool atomic;

  __device__ void operator()(int g, int m, int n, float acc, int split) const {
    const long long idx = map.c_index(g, m, n);
    if (atomic) {
      atomicAdd(workspace + idx, acc);
    } else {
      workspace[split * w_size + idx] = acc;
    }
  }
};

template <class T>
__global__ void reduce_partials_kernel(const float* __restrict__ partials, int parts, long long w_size,
                                       T* __restrict__ dw) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < w_size;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float sum = 0.f;
    for (int p = 0; p < parts; ++p) sum += partials[p * w_size + i];  // fixed order
    dw[i] = from_f32<T>(sum);
  }
}

}  // namespace

Status launch_conv_backward_weight(DType dtype, const ConvShape& s, const void* x, const void* dy, bool deterministic,
                                   float* workspace, void* dw) {
  const GemmPlan plan = wgrad_plan(s);
  const long long w_size = s.w_size();
  const bool atomic = !deterministic && plan.splits > 1;
  return detail::dispatch_dtype(dtype, "conv backward-weight", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if (atomic) {
      KC_RETURN_IF_ERROR(
          detail::cuda_status(cudaMemsetAsync(workspace, 0, w_size * sizeof(float), detail::launch_stream()),
                              "conv backward-weight: zero the accumulator"));
    }
    const BackwardWeightMap map{s};
    const BackwardWeightEpilogue epi{map, workspace, w_size, atomic};
    KC_RETURN_IF_ERROR(
        detail::run_igemm(map, static_cast<const T*>(dy), static_cast<const T*>(x), epi, plan, "conv backward-weight"));
    const int parts = atomic ? 1 : plan.splits;  // every split wrote every weight once
    reduce_partials_kernel<T><<<detail::blocks_for(w_size, 256), 256, 0, detail::launch_stream()>>>(
        workspace, parts, w_size, static_cast<T*>(dw));
    return detail::launch_status("conv backward-weight reduction");
  });
}

}  // namespace kc::gpu
