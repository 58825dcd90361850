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

// Tensor-op kernels for a 16-bit T (CUTLASS's unit-test tiles, Sm80 and later).
template <typename T>
using FpropTc = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dFprop<
    T, Nhwc, T, Nhwc, T, Nhwc, float, TensorOp, cutlass::arch::Sm80, GemmShape<128, 128, 64>, GemmShape<64, 64, 64>,
    GemmShape<16, 8, 16>, Epilogue<T>, Swizzle, 3, cutlass::arch::OpMultiplyAdd, kOptimized>::Kernel>;
template <typename T, cutlass::conv::StrideSupport kStride, typename DgradSwizzle>
using DgradTc = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dDgrad<
    T, Nhwc, T, Nhwc, T, Nhwc, float, TensorOp, cutlass::arch::Sm80, GemmShape<128, 128, 32>, GemmShape<64, 64, 32>,
    GemmShape<16, 8, 16>, Epilogue<T>, DgradSwizzle, 3, cutlass::arch::OpMultiplyAdd, kOptimized, kStride>::Kernel>;
template <typename T>
using DgradUnity = DgradTc<T, cutlass::conv::StrideSupport::kUnity, Swizzle>;
template <typename T>
using DgradStrided = DgradTc<T, cutlass::conv::StrideSupport::kStrided,
                             cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>>;
// dw in f32 (a sum over the batch and every position), rounded to T once after.
template <typename T>
using WgradTc = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dWgrad<
    T, Nhwc, T, Nhwc, float, Nhwc, float, TensorOp, cutlass::arch::Sm80, GemmShape<64, 256, 32>, GemmShape<64, 64, 32>,
    GemmShape<16, 8, 16>, Epilogue<float>, Swizzle, 4, cutlass::arch::OpMultiplyAdd, kOptimized>::Kernel>;

// f32 on CUDA cores (FFMA), one element per access: any channel count.
using FpropSimtF32 = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dFprop<
    float, Nhwc, float, Nhwc, float, Nhwc, float, Simt, cutlass::arch::Sm80, GemmShape<128, 128, 8>,
    GemmShape<32, 64, 8>, GemmShape<1, 1, 1>, cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
    Swizzle, 4, cutlass::arch::OpMultiplyAdd, kOptimized>::Kernel>;

struct Entry {
  const char* name;
  cutlass::Status (*can_implement)(const ImplicitGemmProblem&);
};

template <typename Conv>
cutlass::Status can(const ImplicitGemmProblem& p) {
  return Conv::can_implement(typename Conv::Arguments(problem_2d(p)));
}

std::vector<Entry> catalog(Element e, Pass pass) {
  using bf16 = cutlass::bfloat16_t;
  using f16 = cutlass::half_t;
  switch (pass) {
    case Pass::kFprop:
      if (e == Element::kBf16) return {{"fprop bf16 128x128x64, 3 stages", can<FpropTc<bf16>>}};
      if (e == Element::kF16) return {{"fprop f16 128x128x64, 3 stages", can<FpropTc<f16>>}};
      return {{"fprop f32 simt 128x128x8, 4 stages", can<FpropSimtF32>}};
    case Pass::kDgrad:
      if (e == Element::kBf16)
        return {{"dgrad bf16 unit stride 128x128x32, 3 stages", can<DgradUnity<bf16>>},
                {"dgrad bf16 strided 128x128x32, 3 stages", can<DgradStrided<bf16>>}};
      if (e == Element::kF16)
        return {{"dgrad f16 unit stride 128x128x32, 3 stages", can<DgradUnity<f16>>},
                {"dgrad f16 strided 128x128x32, 3 stages", can<DgradStrided<f16>>}};
      return {};
    case Pass::kWgrad:
      if (e == Element::kBf16) return {{"wgrad bf16 64x256x32, 4 stages (f32 dw)", can<WgradTc<bf16>>}};
      if (e == Element::kF16) return {{"wgrad f16 64x256x32, 4 stages (f32 dw)", can<WgradTc<f16>>}};
      return {};
  }
  return {};
}

}  // namespace

Choice choose_kernel(const ImplicitGemmProblem& p, Element e, Pass pass) {
  Choice c;
  if (p.rank != 2) {
    c.why = "3-D problems have no CUTLASS kernel in the catalog yet";
    return c;
  }
  const std::vector<Entry> kernels = catalog(e, pass);
  if (kernels.empty()) c.why = "no CUTLASS kernel in the catalog for this pass and dtype";
  for (const Entry& k : kernels) {
    const cutlass::Status s = k.can_implement(p);
    if (s == cutlass::Status::kSuccess) return {true, k.name, ""};
    if (c.why.empty()) c.why = std::string(k.name) + ": " + cutlass::cutlassGetStatusString(s);
  }
  return c;
}

}  // namespace kc::gpu::cutlass_engine
