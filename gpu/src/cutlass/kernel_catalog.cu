// The catalog of CUTLASS 2.x implicit-GEMM kernels (Sm80 tensor-op for bf16/f16 with f32
// accumulation, SIMT FFMA for f32: no TF32, as the tolerance model assumes f32 products),
// 2-D only so far, and the choice among them by can_implement(). Only the kernel types
// are named here; nothing launches them yet, so no device code is compiled for them.
#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/conv/device/implicit_gemm_convolution.h>
#include <cutlass/conv/kernel/default_conv2d_dgrad.h>
#include <cutlass/conv/kernel/default_conv2d_fprop.h>
#include <cutlass/conv/kernel/default_conv2d_wgrad.h>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernel_catalog.h"
#include "problem_size.cuh"

namespace kc::gpu::cutlass_engine {
namespace {

using Nhwc = cutlass::layout::TensorNHWC;
using cutlass::gemm::GemmShape;
template <typename T>
using Epilogue = cutlass::epilogue::thread::LinearCombination<T, 128 / cutlass::sizeof_bits<T>::value, float, float>;
using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>;
using TensorOp = cutlass::arch::OpClassTensorOp;
using Simt = cutlass::arch::OpClassSimt;
constexpr auto kOptimized = cutlass::conv::IteratorAlgorithm::kOptimized;

// Tensor-op kernels for a 16-bit T (CUTLASS's unit-test tiles, Sm80 and later), four
// warps each: a large and a small tile per pass (kc/gpu/cutlass_tiles.h).
template <typename T, int kM, int kN, int kK, int kStages>
using FpropTc = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dFprop<
    T, Nhwc, T, Nhwc, T, Nhwc, float, TensorOp, cutlass::arch::Sm80, GemmShape<kM, kN, kK>,
    GemmShape<kM / 2, kN / 2, kK>, GemmShape<16, 8, 16>, Epilogue<T>, Swizzle, kStages, cutlass::arch::OpMultiplyAdd,
    kOptimized>::Kernel>;
template <typename T, int kM, int kN, cutlass::conv::StrideSupport kStride, typename DgradSwizzle>
using DgradTc = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dDgrad<
    T, Nhwc, T, Nhwc, T, Nhwc, float, TensorOp, cutlass::arch::Sm80, GemmShape<kM, kN, 32>,
    GemmShape<kM / 2, kN / 2, 32>, GemmShape<16, 8, 16>, Epilogue<T>, DgradSwizzle, 3, cutlass::arch::OpMultiplyAdd,
    kOptimized, kStride>::Kernel>;
template <typename T, int kM, int kN>
using DgradUnity = DgradTc<T, kM, kN, cutlass::conv::StrideSupport::kUnity, Swizzle>;
template <typename T, int kM, int kN>
using DgradStrided = DgradTc<T, kM, kN, cutlass::conv::StrideSupport::kStrided,
                             cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>>;
// dw in f32 (a sum over the batch and every position), rounded to T once after.
template <typename T, int kM, int kN, int kWarpM, int kWarpN, int kStages>
using WgradTc = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dWgrad<
    T, Nhwc, T, Nhwc, float, Nhwc, float, TensorOp, cutlass::arch::Sm80, GemmShape<kM, kN, 32>,
    GemmShape<kWarpM, kWarpN, 32>, GemmShape<16, 8, 16>, Epilogue<float>, Swizzle, kStages,
    cutlass::arch::OpMultiplyAdd, kOptimized>::Kernel>;

// f32 on CUDA cores (FFMA), one element per access: any channel count.
template <int kM, int kN, int kWarpM, int kWarpN>
using FpropSimtF32 = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dFprop<
    float, Nhwc, float, Nhwc, float, Nhwc, float, Simt, cutlass::arch::Sm80, GemmShape<kM, kN, 8>,
    GemmShape<kWarpM, kWarpN, 8>, GemmShape<1, 1, 1>,
    cutlass::epilogue::thread::LinearCombination<float, 1, float, float>, Swizzle, 4, cutlass::arch::OpMultiplyAdd,
    kOptimized>::Kernel>;

struct Entry {
  const char* name;
  TileSize tile;
  cutlass::Status (*can_implement)(const ImplicitGemmProblem&);
};

template <typename Conv>
cutlass::Status can(const ImplicitGemmProblem& p) {
  return Conv::can_implement(typename Conv::Arguments(problem_2d(p)));
}

constexpr TileSize L = TileSize::kLarge, S = TileSize::kSmall;

template <typename T>
std::vector<Entry> tensor_op(const char* dt, ConvPass pass) {
  static const std::string n[] = {std::string("fprop ") + dt + " 128x128x64, 3 stages",
                                  std::string("fprop ") + dt + " 64x64x64, 3 stages",
                                  std::string("dgrad ") + dt + " unit stride 128x128x32, 3 stages",
                                  std::string("dgrad ") + dt + " unit stride 64x64x32, 3 stages",
                                  std::string("dgrad ") + dt + " strided 128x128x32, 3 stages",
                                  std::string("dgrad ") + dt + " strided 64x64x32, 3 stages",
                                  std::string("wgrad ") + dt + " 64x256x32, 4 stages (f32 dw)",
                                  std::string("wgrad ") + dt + " 64x64x32, 3 stages (f32 dw)"};
  switch (pass) {
    case ConvPass::kFprop:
      return {{n[0].c_str(), L, can<FpropTc<T, 128, 128, 64, 3>>}, {n[1].c_str(), S, can<FpropTc<T, 64, 64, 64, 3>>}};
    case ConvPass::kDgrad:
      return {{n[2].c_str(), L, can<DgradUnity<T, 128, 128>>},
              {n[3].c_str(), S, can<DgradUnity<T, 64, 64>>},
              {n[4].c_str(), L, can<DgradStrided<T, 128, 128>>},
              {n[5].c_str(), S, can<DgradStrided<T, 64, 64>>}};
    case ConvPass::kWgrad:
      return {{n[6].c_str(), L, can<WgradTc<T, 64, 256, 64, 64, 4>>},
              {n[7].c_str(), S, can<WgradTc<T, 64, 64, 32, 32, 3>>}};
  }
  return {};
}

std::vector<Entry> catalog(Element e, ConvPass pass) {
  if (e == Element::kBf16) return tensor_op<cutlass::bfloat16_t>("bf16", pass);
  if (e == Element::kF16) return tensor_op<cutlass::half_t>("f16", pass);
  if (pass != ConvPass::kFprop) return {};
  return {{"fprop f32 simt 128x128x8, 4 stages", L, can<FpropSimtF32<128, 128, 32, 64>>},
          {"fprop f32 simt 64x64x8, 4 stages", S, can<FpropSimtF32<64, 64, 32, 32>>}};
}

}  // namespace

Choice choose_kernel(const ImplicitGemmProblem& p, Element e, ConvPass pass, int sms) {
  Choice c;
  if (p.rank != 2) {
    c.why = "3-D problems have no CUTLASS kernel in the catalog yet";
    return c;
  }
  const TileSize want = tile_for(implicit_gemm_extent(p, pass), large_tile(pass), sms);
  std::vector<Entry> kernels = catalog(e, pass);
  if (kernels.empty()) c.why = "no CUTLASS kernel in the catalog for this pass and dtype";
  // The tile the rule wants first, in catalog order; the other tile where none of those fits.
  std::stable_partition(kernels.begin(), kernels.end(), [&](const Entry& k) { return k.tile == want; });
  for (const Entry& k : kernels) {
    const cutlass::Status s = k.can_implement(p);
    if (s == cutlass::Status::kSuccess) return {true, k.name, ""};
    if (c.why.empty()) c.why = std::string(k.name) + ": " + cutlass::cutlassGetStatusString(s);
  }
  return c;
}

}  // namespace kc::gpu::cutlass_engine
