// The engine's kernel choice (gpu/src/cutlass/kernel_catalog.h) is each kernel's own
// can_implement(), answered without a GPU: the rows of CUTLASS's constraints that decide
// what stays on today's kernels (channels not a multiple of 8, strided and dilated
// backward data, groups, filters past 32, 3-D for now), and what each pass chooses.
#include <gtest/gtest.h>

#include "kc/gpu/cutlass_problem.h"
#include "kc/shape.h"
#ifdef KC_HAVE_CUTLASS
#include "kernel_catalog.h"
#endif

namespace kc::gpu {
namespace {

#ifdef KC_HAVE_CUTLASS
using cutlass_engine::Choice;
using cutlass_engine::choose_kernel;
using cutlass_engine::Element;
using Pass = ConvPass;

// N = 8, 56x56 (H = 1 for rank 1), square filters, symmetric padding.
ImplicitGemmProblem problem(int c, int k, int r, int stride, int pad, int dilation = 1, int groups = 1, int rank = 2) {
  ConvGeometry g;
  g.batch = 8, g.in_channels = c, g.out_channels = k, g.groups = groups;
  for (int i = 0; i < rank; ++i) {
    DimGeometry d{56, r, stride, dilation, pad, pad, 1};
    d.out = (d.in + 2 * pad - d.extent()) / stride + 1;
    g.spatial.dims.push_back(d);
  }
  return *implicit_gemm_problem(g);
}

TEST(CutlassSelection, AResNetLayerRunsEveryPassOnTensorCores) {
  const ImplicitGemmProblem p = problem(64, 64, 3, 1, 1);
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kFprop).kernel, "fprop bf16 128x128x64, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kF16, Pass::kFprop).kernel, "fprop f16 128x128x64, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kDgrad).kernel, "dgrad bf16 unit stride 128x128x32, 3 stages");
  // dw is a 64 x 576 GEMM: 5 large blocks would leave most of 132 multiprocessors idle.
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kWgrad).kernel, "wgrad bf16 64x64x32, 3 stages (f32 dw)");
  EXPECT_EQ(choose_kernel(p, Element::kF32, Pass::kFprop).kernel, "fprop f32 simt 128x128x8, 4 stages");
  EXPECT_TRUE(choose_kernel(problem(64, 64, 5, 1, 2, 1, 1, 1), Element::kBf16, Pass::kFprop).chosen);  // rank 1
}

TEST(CutlassSelection, ChannelsOffTheVectorWidthStayOnTodaysKernels) {
  const Choice rgb = choose_kernel(problem(3, 64, 7, 2, 3), Element::kBf16, Pass::kFprop);
  EXPECT_FALSE(rgb.chosen);
  EXPECT_EQ(rgb.why, "fprop bf16 64x64x64, 3 stages: Error Invalid Problem");  // 49 large blocks: small first
  const Choice odd_k = choose_kernel(problem(64, 63, 3, 1, 1), Element::kBf16, Pass::kFprop);
  EXPECT_EQ(odd_k.why, "fprop bf16 128x128x64, 3 stages: Error Misaligned Operand");
  // f32 on CUDA cores moves one element per access: any channel count.
  EXPECT_TRUE(choose_kernel(problem(3, 64, 7, 2, 3), Element::kF32, Pass::kFprop).chosen);
}

TEST(CutlassSelection, BackwardDataTakesTheStridedKernelButNotWithDilation) {
  EXPECT_EQ(choose_kernel(problem(64, 64, 3, 2, 1), Element::kBf16, Pass::kDgrad).kernel,
            "dgrad bf16 strided 128x128x32, 3 stages");
  EXPECT_EQ(choose_kernel(problem(64, 64, 3, 1, 2, 2), Element::kBf16, Pass::kDgrad).kernel,
            "dgrad bf16 unit stride 128x128x32, 3 stages");  // dilation with unit stride is fine
  const Choice both = choose_kernel(problem(64, 64, 3, 2, 2, 2), Element::kBf16, Pass::kDgrad);
  EXPECT_FALSE(both.chosen);
  EXPECT_EQ(both.why, "dgrad bf16 unit stride 128x128x32, 3 stages: Error Not Supported");
  EXPECT_FALSE(choose_kernel(problem(64, 64, 3, 1, 1), Element::kF32, Pass::kDgrad).chosen);  // none for f32 yet
}

TEST(CutlassSelection, GroupsLargeFiltersAndThreeDStayOnTodaysKernels) {
  EXPECT_FALSE(choose_kernel(problem(64, 64, 3, 1, 1, 1, 2), Element::kBf16, Pass::kFprop).chosen);
  EXPECT_FALSE(choose_kernel(problem(64, 64, 3, 1, 1, 1, 64), Element::kBf16, Pass::kFprop).chosen);  // depthwise
  EXPECT_EQ(choose_kernel(problem(64, 64, 33, 1, 16), Element::kBf16, Pass::kFprop).why,
            "fprop bf16 128x128x64, 3 stages: Error Not Supported");  // the optimized iterators stop at 32
  EXPECT_EQ(choose_kernel(problem(64, 64, 3, 1, 1, 1, 1, 3), Element::kBf16, Pass::kFprop).why,
            "3-D problems have no CUTLASS kernel in the catalog yet");
}
// The tile rule picks the small tile where the large one would not fill the device, and
// a kernel of the other tile where none of the wanted one accepts the problem.
TEST(CutlassSelection, SmallLayersGetTheSmallTile) {
  ImplicitGemmProblem small = problem(64, 64, 3, 1, 1);
  small.n = 1, small.in = {1, 14, 14}, small.out = {1, 14, 14};  // M = 196: 2 large blocks
  EXPECT_EQ(choose_kernel(small, Element::kBf16, Pass::kFprop).kernel, "fprop bf16 64x64x64, 3 stages");
  EXPECT_EQ(choose_kernel(small, Element::kBf16, Pass::kFprop, 2).kernel, "fprop bf16 128x128x64, 3 stages");
  const ImplicitGemmProblem big_wgrad = problem(512, 512, 3, 1, 1);  // 512 x 4608: 144 large blocks
  EXPECT_EQ(choose_kernel(big_wgrad, Element::kBf16, Pass::kWgrad).kernel, "wgrad bf16 64x256x32, 4 stages (f32 dw)");
}
#else
TEST(CutlassSelection, AResNetLayerRunsEveryPassOnTensorCores) {
  GTEST_SKIP() << "no CUTLASS headers in this build (scripts/fetch-cutlass.sh, KC_CUTLASS_DIR)";
}
#endif

}  // namespace
}  // namespace kc::gpu
