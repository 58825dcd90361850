// The implicit-GEMM problem CUTLASS is given (kc/gpu/cutlass_problem.h): ranks 1 to 3,
// asymmetric padding as the low side plus the output size, stride, dilation, groups, and
// the two traps (the mode, the output size CUTLASS would compute for a dilated filter),
// checked on the problem CUTLASS's own types hold where its headers were fetched.
#include <gtest/gtest.h>

#include "kc/gpu/cutlass_problem.h"
#include "kc/shape.h"
#ifdef KC_HAVE_CUTLASS
#include "problem_adapter.h"
#endif

namespace kc::gpu {
namespace {

DimGeometry dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi) {
  DimGeometry g{in, k, s, d, lo, hi, 1};
  g.out = (in + lo + hi - g.extent()) / s + 1;
  return g;
}

ConvGeometry conv(std::vector<DimGeometry> dims, int64_t c = 16, int64_t k = 8, int64_t groups = 1) {
  ConvGeometry g;
  g.batch = 2, g.in_channels = c, g.out_channels = k, g.groups = groups;
  g.spatial.dims = std::move(dims);
  return g;
}

TEST(CutlassProblem, Rank2KeepsEveryFieldAndTheLowPadding) {
  const StatusOr<ImplicitGemmProblem> p = implicit_gemm_problem(conv({dim(9, 3, 2, 1, 2, 0), dim(7, 2, 1, 3, 1, 2)}));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->rank, 2);
  EXPECT_EQ((std::array<int, 3>{1, 9, 7}), p->in);
  EXPECT_EQ((std::array<int, 3>{1, 3, 2}), p->filter);
  EXPECT_EQ((std::array<int, 3>{1, 5, 7}), p->out);  // (9+2-3)/2+1 = 5, (7+3-4)/1+1 = 7
  EXPECT_EQ((std::array<int, 3>{0, 2, 1}), p->pad);  // the low sides: the high ones follow from out
  EXPECT_EQ((std::array<int, 3>{1, 2, 1}), p->stride);
  EXPECT_EQ((std::array<int, 3>{1, 1, 3}), p->dilation);
  EXPECT_TRUE(p->cross_correlation);
}

TEST(CutlassProblem, Rank1IsHeightOneAndRank3IsThreeD) {
  const StatusOr<ImplicitGemmProblem> one = implicit_gemm_problem(conv({dim(20, 5, 3, 2, 4, 1)}));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->rank, 2);
  EXPECT_EQ((std::array<int, 3>{1, 1, 20}), one->in);
  EXPECT_EQ((std::array<int, 3>{1, 1, 5}), one->filter);
  EXPECT_EQ((std::array<int, 3>{1, 1, 6}), one->out);  // (20+5-9)/3+1
  const StatusOr<ImplicitGemmProblem> three =
      implicit_gemm_problem(conv({dim(4, 2, 1, 1, 0, 1), dim(5, 3, 1, 1, 1, 1), dim(6, 3, 2, 1, 1, 0)}, 8, 4, 2));
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->rank, 3);
  EXPECT_EQ(three->groups, 2);
  EXPECT_EQ((std::array<int, 3>{4, 5, 3}), three->out);
  EXPECT_EQ((std::array<int, 3>{0, 1, 1}), three->pad);
}

TEST(CutlassProblem, OtherPaddingModesAreRefusedWithTheReason) {
  ConvGeometry g = conv({dim(8, 3, 1, 1, 1, 1), dim(8, 3, 1, 1, 1, 1)});
  g.mode = PaddingMode::kReflect;
  const StatusOr<ImplicitGemmProblem> p = implicit_gemm_problem(g);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("padding_mode reflect: CUTLASS's problem pads with zeros only"),
            std::string::npos);
}

#ifdef KC_HAVE_CUTLASS
// What CUTLASS's types hold is what the mapping says: every field, cross-correlation
// (their default constructor's mode is convolution, which flips the filter).
TEST(CutlassProblem, CutlassHoldsTheProblemAsMapped) {
  for (const ConvGeometry& g : {conv({dim(9, 3, 2, 1, 2, 0), dim(7, 2, 1, 3, 1, 2)}), conv({dim(20, 5, 3, 2, 4, 1)}),
                                conv({dim(4, 2, 1, 1, 0, 1), dim(5, 3, 1, 1, 1, 1), dim(6, 3, 2, 1, 1, 0)}, 8, 4, 2)}) {
    const StatusOr<ImplicitGemmProblem> p = implicit_gemm_problem(g);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(cutlass_engine::as_cutlass_sees_it(*p), *p);
  }
}

// The trap the output size guards: CUTLASS's constructor that computes P subtracts R*d,
// not (R-1)*d+1: 55 for a 3x3 filter with dilation 2 on 56 with padding 2, where 56 is due.
TEST(CutlassProblem, TheOutputSizeIsGivenBecauseCutlassComputesItWrongForDilation) {
  const StatusOr<ImplicitGemmProblem> p = implicit_gemm_problem(conv({dim(56, 3, 1, 2, 2, 2), dim(56, 3, 1, 2, 2, 2)}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->out[1], 56);
  EXPECT_EQ(cutlass_engine::cutlass_computed_height(*p), 55);
  EXPECT_EQ(cutlass_engine::as_cutlass_sees_it(*p).out[1], 56);
}
#else
TEST(CutlassProblem, CutlassHoldsTheProblemAsMapped) {
  GTEST_SKIP() << "no CUTLASS headers in this build (scripts/fetch-cutlass.sh, KC_CUTLASS_DIR)";
}
#endif

}  // namespace
}  // namespace kc::gpu
