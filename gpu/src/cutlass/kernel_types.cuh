// The CUTLASS 2.x implicit-GEMM kernel types of the engine, from CUTLASS's own unit-test
// configurations (Sm80 and later; built for the project's sm_90): tensor-op kernels for
// a 16-bit T with f32 accumulation, SIMT FFMA kernels for f32 (no TF32: the tolerance
// model assumes f32 products). Activations NHWC / NDHWC, filters KRSC / KTRSC; wgrad
// writes dw in f32 for every T (one rounding after, by the engine). Included by the
// kernels_<dtype>.cu translation units only, each naming the kernels of its dtype.
#pragma once

#include <cutlass/conv/device/implicit_gemm_convolution.h>
#include <cutlass/conv/kernel/default_conv2d_dgrad.h>
#include <cutlass/conv/kernel/default_conv2d_fprop.h>
#include <cutlass/conv/kernel/default_conv2d_wgrad.h>
#include <cutlass/conv/kernel/default_conv3d_dgrad.h>
#include <cutlass/conv/kernel/default_conv3d_fprop.h>
#include <cutlass/conv/kernel/default_conv3d_wgrad.h>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/epilogue/thread/linear_combination_relu.h>

namespace kc::gpu::cutlass_engine::types {

using Nhwc = cutlass::layout::TensorNHWC;
using Ndhwc = cutlass::layout::TensorNDHWC;
using cutlass::gemm::GemmShape;
using Sm80 = cutlass::arch::Sm80;
using TensorOp = cutlass::arch::OpClassTensorOp;
using Simt = cutlass::arch::OpClassSimt;
using Fma = cutlass::arch::OpMultiplyAdd;
using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>;
using StridedSwizzle = cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>;
constexpr auto kOptimized = cutlass::conv::IteratorAlgorithm::kOptimized;
constexpr auto kAnalytic = cutlass::conv::IteratorAlgorithm::kAnalytic;
constexpr auto kUnity = cutlass::conv::StrideSupport::kUnity;
constexpr auto kStrided = cutlass::conv::StrideSupport::kStrided;

// 128-bit vectors of T in the epilogue (one element for f32 SIMT, whose loads are scalar).
template <typename T, bool kSimt>
constexpr int kVector = kSimt ? 1 : 128 / cutlass::sizeof_bits<T>::value;
template <typename T, bool kSimt = false>
using Linear = cutlass::epilogue::thread::LinearCombination<T, kVector<T, kSimt>, float, float>;
template <typename T, bool kSimt = false>
using BiasRelu = cutlass::epilogue::thread::LinearCombinationRelu<T, kVector<T, kSimt>, float, float>;

template <typename Kernel>
using Device = cutlass::conv::device::ImplicitGemmConvolution<Kernel>;

// ---- 2-D, tensor cores (16-bit T), four warps a block ----
// Out: y's element, T; or float for the fused backward's pre-activation (the mainloop the
// same, so the same sums as the forward's).
template <typename T, typename Epi, int kM, int kN, int kK, int kStages, typename Out = T>
using FpropTc = Device<typename cutlass::conv::kernel::DefaultConv2dFprop<
    T, Nhwc, T, Nhwc, Out, Nhwc, float, TensorOp, Sm80, GemmShape<kM, kN, kK>, GemmShape<kM / 2, kN / 2, kK>,
    GemmShape<16, 8, 16>, Epi, Swizzle, kStages, Fma, kOptimized>::Kernel>;
template <typename T, int kM, int kN, cutlass::conv::StrideSupport kStride, typename Sw>
using DgradTc = Device<typename cutlass::conv::kernel::DefaultConv2dDgrad<
    T, Nhwc, T, Nhwc, T, Nhwc, float, TensorOp, Sm80, GemmShape<kM, kN, 32>, GemmShape<kM / 2, kN / 2, 32>,
    GemmShape<16, 8, 16>, Linear<T>, Sw, 3, Fma, kOptimized, kStride>::Kernel>;
template <typename T, int kM, int kN, int kWarpM, int kWarpN, int kStages>
using WgradTc = Device<typename cutlass::conv::kernel::DefaultConv2dWgrad<
    T, Nhwc, T, Nhwc, float, Nhwc, float, TensorOp, Sm80, GemmShape<kM, kN, 32>, GemmShape<kWarpM, kWarpN, 32>,
    GemmShape<16, 8, 16>, Linear<float>, Swizzle, kStages, Fma, kOptimized>::Kernel>;

// ---- 2-D, f32 on CUDA cores (FFMA), one element per access: any channel count ----
template <typename Epi, int kM, int kN, int kWarpM, int kWarpN>
using FpropSimt = Device<typename cutlass::conv::kernel::DefaultConv2dFprop<
    float, Nhwc, float, Nhwc, float, Nhwc, float, Simt, Sm80, GemmShape<kM, kN, 8>, GemmShape<kWarpM, kWarpN, 8>,
    GemmShape<1, 1, 1>, Epi, Swizzle, 4, Fma, kOptimized>::Kernel>;
template <int kM, int kN, int kWarpM, int kWarpN, cutlass::conv::StrideSupport kStride, typename Sw>
using DgradSimt = Device<typename cutlass::conv::kernel::DefaultConv2dDgrad<
    float, Nhwc, float, Nhwc, float, Nhwc, float, Simt, Sm80, GemmShape<kM, kN, 8>, GemmShape<kWarpM, kWarpN, 8>,
    GemmShape<1, 1, 1>, Linear<float, true>, Sw, 4, Fma, kOptimized, kStride>::Kernel>;
template <int kM, int kN, int kWarpM, int kWarpN>
using WgradSimt = Device<typename cutlass::conv::kernel::DefaultConv2dWgrad<
    float, Nhwc, float, Nhwc, float, Nhwc, float, Simt, Sm80, GemmShape<kM, kN, 8>, GemmShape<kWarpM, kWarpN, 8>,
    GemmShape<1, 1, 1>, Linear<float, true>, Swizzle, 4, Fma, kOptimized>::Kernel>;

// ---- 3-D: one tile per pass (CUTLASS's Conv3d tests'); strided dgrad is analytic ----
template <typename T, typename Op>
struct Tile3d;  // tensor-op: 128x128x32, warps 64x64x32, mma 16x8x16, 3 stages
template <typename T>
struct Tile3d<T, TensorOp> {
  using Block = GemmShape<128, 128, 32>;
  using Warp = GemmShape<64, 64, 32>;
  using Mma = GemmShape<16, 8, 16>;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
};
template <typename T>
struct Tile3d<T, Simt> {  // f32 SIMT: 128x128x8, warps 32x64x8, 4 stages
  using Block = GemmShape<128, 128, 8>;
  using Warp = GemmShape<32, 64, 8>;
  using Mma = GemmShape<1, 1, 1>;
  static constexpr int kStages = 4;
  static constexpr bool kSimt = true;
};

template <typename T, typename Op, typename Epi, typename Out = T>
using Fprop3d = Device<typename cutlass::conv::kernel::DefaultConv3dFprop<
    T, Ndhwc, T, Ndhwc, Out, Ndhwc, float, Op, Sm80, typename Tile3d<T, Op>::Block, typename Tile3d<T, Op>::Warp,
    typename Tile3d<T, Op>::Mma, Epi, Swizzle, Tile3d<T, Op>::kStages, Fma, kOptimized>::Kernel>;
template <typename T, typename Op, cutlass::conv::IteratorAlgorithm kAlgo, cutlass::conv::StrideSupport kStride>
using Dgrad3d = Device<typename cutlass::conv::kernel::DefaultConv3dDgrad<
    T, Ndhwc, T, Ndhwc, T, Ndhwc, float, Op, Sm80, typename Tile3d<T, Op>::Block, typename Tile3d<T, Op>::Warp,
    typename Tile3d<T, Op>::Mma, Linear<T, Tile3d<T, Op>::kSimt>, Swizzle, Tile3d<T, Op>::kStages, Fma, kAlgo,
    kStride>::Kernel>;
template <typename T, typename Op>
using Wgrad3d = Device<typename cutlass::conv::kernel::DefaultConv3dWgrad<
    T, Ndhwc, T, Ndhwc, float, Ndhwc, float, Op, Sm80, typename Tile3d<T, Op>::Block, typename Tile3d<T, Op>::Warp,
    typename Tile3d<T, Op>::Mma, Linear<float, Tile3d<T, Op>::kSimt>, Swizzle, Tile3d<T, Op>::kStages, Fma,
    kOptimized>::Kernel>;

}  // namespace kc::gpu::cutlass_engine::types
