// The engine's kernels for a 16-bit T on tensor cores (kernels_bf16.cu, kernels_f16.cu
// instantiate it): per 2-D pass a large and a small tile (kc/gpu/cutlass_tiles.h),
// fprop with and without the bias + relu epilogue, dgrad for unit and other strides,
// wgrad into f32; the 3-D passes in one tile each.
#pragma once

#include <string>
#include <vector>

#include "kernel_launch.cuh"
#include "kernel_types.cuh"

namespace kc::gpu::cutlass_engine {

template <typename T>
std::vector<KernelEntry> tensor_op_kernels(Element e, const std::string& dt) {
  using namespace types;
  constexpr TileSize L = TileSize::kLarge, S = TileSize::kSmall;
  constexpr ConvPass F = ConvPass::kFprop, D = ConvPass::kDgrad, W = ConvPass::kWgrad;
  constexpr Epilogue R = Epilogue::kBiasRelu;
  using F1 = FpropTc<T, Linear<T>, 128, 128, 64, 3>;
  using F2 = FpropTc<T, Linear<T>, 64, 64, 64, 3>;
  using F3 = FpropTc<T, BiasRelu<T>, 128, 128, 64, 3>;
  using F4 = FpropTc<T, BiasRelu<T>, 64, 64, 64, 3>;
  using D1 = DgradTc<T, 128, 128, kUnity, Swizzle>;
  using D2 = DgradTc<T, 64, 64, kUnity, Swizzle>;
  using D3 = DgradTc<T, 128, 128, kStrided, StridedSwizzle>;
  using D4 = DgradTc<T, 64, 64, kStrided, StridedSwizzle>;
  using W1 = WgradTc<T, 64, 256, 64, 64, 4>;
  using W2 = WgradTc<T, 64, 64, 32, 32, 3>;
  using F3d = Fprop3d<T, TensorOp, Linear<T>>;
  using R3d = Fprop3d<T, TensorOp, BiasRelu<T>>;
  using D3d = Dgrad3d<T, TensorOp, kOptimized, kUnity>;
  using S3d = Dgrad3d<T, TensorOp, kAnalytic, kStrided>;
  using W3d = Wgrad3d<T, TensorOp>;
  const std::string f = "fprop " + dt, d = "dgrad " + dt, w = "wgrad " + dt;
  return {
      entry<F1>(kernel_name<F1>(f), F, e, L),
      entry<F2>(kernel_name<F2>(f), F, e, S),
      entry<F3>(kernel_name<F3>(f + " + bias + relu"), F, e, L, R),
      entry<F4>(kernel_name<F4>(f + " + bias + relu"), F, e, S, R),
      entry<D1>(kernel_name<D1>(d + " unit stride"), D, e, L),
      entry<D2>(kernel_name<D2>(d + " unit stride"), D, e, S),
      entry<D3>(kernel_name<D3>(d + " strided"), D, e, L),
      entry<D4>(kernel_name<D4>(d + " strided"), D, e, S),
      entry<W1>(kernel_name<W1>(w, " (f32 dw)"), W, e, L),
      entry<W2>(kernel_name<W2>(w, " (f32 dw)"), W, e, S),
      entry<F3d>(kernel_name<F3d>(f + " 3-D"), F, e, L),
      entry<R3d>(kernel_name<R3d>(f + " 3-D + bias + relu"), F, e, L, R),
      entry<D3d>(kernel_name<D3d>(d + " 3-D unit stride"), D, e, L),
      entry<S3d>(kernel_name<S3d>(d + " 3-D strided, analytic"), D, e, L),
      entry<W3d>(kernel_name<W3d>(w + " 3-D", " (f32 dw)"), W, e, L),
  };
}

}  // namespace kc::gpu::cutlass_engine
