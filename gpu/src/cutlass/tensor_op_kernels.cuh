// The engine's kernels for a 16-bit T on tensor cores (kernels_bf16.cu, kernels_f16.cu
// instantiate it): per 2-D pass a large and a small tile (kc/gpu/cutlass_tiles.h),
// fprop with and without the bias + relu epilogue and into f32 (the fused backward's
// pre-activation), dgrad for unit and other strides, wgrad into f32; the 3-D passes in
// one tile each.
#pragma once

#include <string>
#include <vector>

#include "kernel_list.cuh"
#include "kernel_types.cuh"

namespace kc::gpu::cutlass_engine {

// The 18 kernel types of a 16-bit T, as kernel_list.cuh names them.
template <typename T>
struct TensorOpKernels {
  using F1 = types::FpropTc<T, types::Linear<T>, 128, 128, 64, 3>;
  using F2 = types::FpropTc<T, types::Linear<T>, 64, 64, 64, 3>;
  using R1 = types::FpropTc<T, types::BiasRelu<T>, 128, 128, 64, 3>;
  using R2 = types::FpropTc<T, types::BiasRelu<T>, 64, 64, 64, 3>;
  using D1 = types::DgradTc<T, 128, 128, types::kUnity, types::Swizzle>;
  using D2 = types::DgradTc<T, 64, 64, types::kUnity, types::Swizzle>;
  using S1 = types::DgradTc<T, 128, 128, types::kStrided, types::StridedSwizzle>;
  using S2 = types::DgradTc<T, 64, 64, types::kStrided, types::StridedSwizzle>;
  using W1 = types::WgradTc<T, 64, 256, 64, 64, 4>;
  using W2 = types::WgradTc<T, 64, 64, 32, 32, 3>;
  using F3d = types::Fprop3d<T, types::TensorOp, types::Linear<T>>;
  using R3d = types::Fprop3d<T, types::TensorOp, types::BiasRelu<T>>;
  using D3d = types::Dgrad3d<T, types::TensorOp, types::kOptimized, types::kUnity>;
  using S3d = types::Dgrad3d<T, types::TensorOp, types::kAnalytic, types::kStrided>;
  using W3d = types::Wgrad3d<T, types::TensorOp>;
  using Z1 = types::FpropTc<T, types::Linear<float>, 128, 128, 64, 3, float>;  // pre-activations in f32
  using Z2 = types::FpropTc<T, types::Linear<float>, 64, 64, 64, 3, float>;
  using Z3d = types::Fprop3d<T, types::TensorOp, types::Linear<float>, float>;
};

template <typename T>
std::vector<KernelEntry> tensor_op_kernels(Element e, const std::string& dt) {
  return kernel_list<TensorOpKernels<T>>(e, dt, " (f32 dw)");
}

}  // namespace kc::gpu::cutlass_engine
