// The engine's kernel choice (gpu/src/cutlass/kernel_catalog.h) is each kernel's own
// can_implement(), answered without a GPU: the rows of CUTLASS's constraints that decide
// what stays on today's kernels (channels not a multiple of 8, strided and dilated
// backward data, groups, filters past 32), with the reason in our words, and what each
// pass, dtype, epilogue and rank chooses.
#include <gtest/gtest.h>

#include <set>
#include <string>

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
using cutlass_engine::Epilogue;
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
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kFprop).name(), "fprop bf16 128x128x64, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kF16, Pass::kFprop).name(), "fprop f16 128x128x64, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kFprop, Epilogue::kBiasRelu).name(),
            "fprop bf16 + bias + relu 128x128x64, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kFprop, Epilogue::kPreActivation).name(),
            "fprop bf16 -> f32 pre-activation 128x128x64, 3 stages");  // the fused backward's z
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kDgrad).name(), "dgrad bf16 unit stride 128x128x32, 3 stages");
  // dw is a 64 x 576 GEMM: 5 large blocks would leave most of 132 multiprocessors idle.
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kWgrad).name(), "wgrad bf16 64x64x32, 3 stages (f32 dw)");
  EXPECT_EQ(choose_kernel(p, Element::kF32, Pass::kFprop).name(), "fprop f32 simt 128x128x8, 4 stages");
  EXPECT_EQ(choose_kernel(p, Element::kF32, Pass::kDgrad).name(), "dgrad f32 simt unit stride 128x128x8, 4 stages");
  EXPECT_EQ(choose_kernel(p, Element::kF32, Pass::kWgrad).name(), "wgrad f32 simt 64x64x8, 4 stages");
  EXPECT_TRUE(choose_kernel(problem(64, 64, 5, 1, 2, 1, 1, 1), Element::kBf16, Pass::kFprop).chosen());  // rank 1
}

TEST(CutlassSelection, ChannelsOffTheVectorWidthStayOnTodaysKernels) {
  const Choice rgb = choose_kernel(problem(3, 64, 7, 2, 3), Element::kBf16, Pass::kFprop);
  EXPECT_FALSE(rgb.chosen());
  // 49 large blocks: the small tile is tried first, and its refusal quoted.
  EXPECT_EQ(rgb.why, "channels 3 not a multiple of 8 (fprop bf16 64x64x64, 3 stages: Error Invalid Problem)");
  const Choice odd_k = choose_kernel(problem(64, 63, 3, 1, 1), Element::kBf16, Pass::kFprop);
  EXPECT_EQ(odd_k.why,
            "out_channels 63 not a multiple of 8 (fprop bf16 128x128x64, 3 stages: Error Misaligned Operand)");
  // f32 on CUDA cores moves one element per access: any channel count, every pass.
  for (Pass pass : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad})
    EXPECT_TRUE(choose_kernel(problem(3, 63, 7, 2, 3), Element::kF32, pass).chosen());
}

TEST(CutlassSelection, BackwardDataTakesTheStridedKernelButNotWithDilation) {
  EXPECT_EQ(choose_kernel(problem(64, 64, 3, 2, 1), Element::kBf16, Pass::kDgrad).name(),
            "dgrad bf16 strided 128x128x32, 3 stages");
  EXPECT_EQ(choose_kernel(problem(64, 64, 3, 1, 2, 2), Element::kBf16, Pass::kDgrad).name(),
            "dgrad bf16 unit stride 128x128x32, 3 stages");  // dilation with unit stride is fine
  const Choice both = choose_kernel(problem(64, 64, 3, 2, 2, 2), Element::kBf16, Pass::kDgrad);
  EXPECT_FALSE(both.chosen());
  EXPECT_EQ(
      both.why,
      "backward data both strided and dilated (dgrad bf16 unit stride 128x128x32, 3 stages: Error Not Supported)");
  EXPECT_TRUE(choose_kernel(problem(64, 64, 3, 2, 2, 2), Element::kBf16, Pass::kFprop).chosen());
  EXPECT_TRUE(choose_kernel(problem(64, 64, 3, 2, 2, 2), Element::kBf16, Pass::kWgrad).chosen());
}

TEST(CutlassSelection, GroupsLargeFiltersAndHugeTensorsStayOnTodaysKernels) {
  const Choice grouped = choose_kernel(problem(64, 64, 3, 1, 1, 1, 2), Element::kBf16, Pass::kFprop);
  EXPECT_FALSE(grouped.chosen());
  EXPECT_EQ(grouped.why.rfind("groups 2: the engine's kernels take groups = 1 (", 0), 0u) << grouped.why;
  EXPECT_FALSE(choose_kernel(problem(64, 64, 3, 1, 1, 1, 64), Element::kF32, Pass::kFprop).chosen());  // depthwise
  ImplicitGemmProblem huge = problem(64, 64, 3, 1, 1);
  huge.n = 8192;  // x of 8192 x 56 x 56 x 64 bf16: 3.3 GB
  const Choice big = choose_kernel(huge, Element::kBf16, Pass::kFprop);
  EXPECT_EQ(big.why.rfind("a tensor of 2^31 bytes or more (", 0), 0u) << big.why;
  EXPECT_EQ(choose_kernel(problem(64, 64, 33, 1, 16), Element::kBf16, Pass::kFprop).why,
            "a filter of 33 taps in a dim (the optimized iterators take 32) (fprop bf16 128x128x64, 3 stages: "
            "Error Not Supported)");
}

TEST(CutlassSelection, ThreeDProblemsHaveTheirOwnKernels) {
  const ImplicitGemmProblem p = problem(32, 32, 3, 1, 1, 1, 1, 3);
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kFprop).name(), "fprop bf16 3-D 128x128x32, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kF16, Pass::kFprop, Epilogue::kBiasRelu).name(),
            "fprop f16 3-D + bias + relu 128x128x32, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kBf16, Pass::kDgrad).name(), "dgrad bf16 3-D unit stride 128x128x32, 3 stages");
  EXPECT_EQ(choose_kernel(problem(32, 32, 3, 2, 1, 1, 1, 3), Element::kBf16, Pass::kDgrad).name(),
            "dgrad bf16 3-D strided, analytic 128x128x32, 3 stages");
  EXPECT_EQ(choose_kernel(p, Element::kF32, Pass::kWgrad).name(), "wgrad f32 simt 3-D 128x128x8, 4 stages");
  EXPECT_FALSE(choose_kernel(problem(3, 32, 3, 1, 1, 1, 1, 3), Element::kBf16, Pass::kFprop).chosen());
}

// The tile rule picks the small tile where the large one would not fill the device, and
// a kernel of the other tile where none of the wanted one accepts the problem.
TEST(CutlassSelection, SmallLayersGetTheSmallTile) {
  ImplicitGemmProblem small = problem(64, 64, 3, 1, 1);
  small.n = 1, small.in = {1, 14, 14}, small.out = {1, 14, 14};  // M = 196: 2 large blocks
  EXPECT_EQ(choose_kernel(small, Element::kBf16, Pass::kFprop).name(), "fprop bf16 64x64x64, 3 stages");
  EXPECT_EQ(choose_kernel(small, Element::kBf16, Pass::kFprop, Epilogue::kLinear, 2).name(),
            "fprop bf16 128x128x64, 3 stages");
  const ImplicitGemmProblem big_wgrad = problem(512, 512, 3, 1, 1);  // 512 x 4608: 144 large blocks
  EXPECT_EQ(choose_kernel(big_wgrad, Element::kBf16, Pass::kWgrad).name(), "wgrad bf16 64x256x32, 4 stages (f32 dw)");
}

// Every kernel of the catalog is reachable (some problem chooses it: none is compiled for
// nothing) and named apart from the others.
TEST(CutlassSelection, EveryKernelIsChosenSomewhereUnderItsOwnName) {
  std::set<std::string> names;
  for (Element e : {Element::kBf16, Element::kF16, Element::kF32})
    for (int rank : {2, 3})
      for (int stride : {1, 2})
        for (int n : {1, 64})
          for (int wide : {64, 512})  // dw of 512 x 4608 fills the device with wgrad's large tile
            for (Pass pass : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad})
              for (Epilogue epi : {Epilogue::kLinear, Epilogue::kBiasRelu, Epilogue::kPreActivation}) {
                if (pass != Pass::kFprop && epi != Epilogue::kLinear) continue;
                ImplicitGemmProblem p = problem(wide, wide, 3, stride, 1, 1, 1, rank);
                p.n = n;
                if (rank == 3) {  // 8^3: under CUTLASS's 2^31 bytes a tensor
                  const int out = (8 + 2 - 3) / stride + 1;
                  p.in = {8, 8, 8}, p.out = {out, out, out};
                }
                const Choice c = choose_kernel(p, e, pass, epi);
                ASSERT_TRUE(c.chosen()) << c.why;
                names.insert(c.name());
              }
  std::set<std::string> all;
  for (const cutlass_engine::KernelEntry& k : cutlass_engine::all_kernels()) {
    EXPECT_TRUE(all.insert(k.name).second) << k.name << " twice";
    EXPECT_TRUE(names.count(k.name)) << k.name << " is never chosen";
  }
  EXPECT_EQ(all.size(), 54u);  // 18 per dtype
}
#else
TEST(CutlassSelection, AResNetLayerRunsEveryPassOnTensorCores) {
  GTEST_SKIP() << "no CUTLASS headers in this build (scripts/fetch-cutlass.sh, KC_CUTLASS_DIR)";
}
#endif

}  // namespace
}  // namespace kc::gpu
