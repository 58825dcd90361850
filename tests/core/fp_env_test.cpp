// The judge's floating-point environment: what it is, that set/get round-trip it, and
// that every change a candidate can leave is named.
#include "core/fp_env.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <limits>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace kc {
namespace {

// A subnormal sum: 0 under FTZ/DAZ, itself otherwise.
double subnormal_sum() {
  volatile float tiny = std::numeric_limits<float>::denorm_min();
  volatile float zero = 0.0f;
  return static_cast<double>(tiny + zero);
}

TEST(FpEnv, JudgeEnvironmentRoundsToNearestAndKeepsSubnormals) {
  pin_judge_fp_env();
  EXPECT_EQ(current_fp_env(), judge_fp_env());
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  EXPECT_GT(subnormal_sum(), 0.0);
  EXPECT_EQ(describe_fp_env(current_fp_env()), "");
}

TEST(FpEnv, ARoundingModeIsNamedAndUndone) {
  pin_judge_fp_env();
  const FpEnv judge = current_fp_env();
  std::fesetround(FE_UPWARD);
  const FpEnv left = current_fp_env();
  EXPECT_NE(left, judge);
  EXPECT_NE(describe_fp_change(judge, left).find("left rounding toward +inf"), std::string::npos)
      << describe_fp_change(judge, left);
  pin_judge_fp_env();
  EXPECT_EQ(current_fp_env(), judge);
  std::fesetround(FE_TOWARDZERO);
  EXPECT_NE(describe_fp_change(judge, current_fp_env()).find("toward zero"), std::string::npos);
  pin_judge_fp_env();
}

#if defined(__x86_64__)
TEST(FpEnv, FlushToZeroIsNamedAndUndone) {
  pin_judge_fp_env();
  const FpEnv judge = current_fp_env();
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ, as crtfastmath.o does
  EXPECT_EQ(subnormal_sum(), 0.0);
  EXPECT_EQ(describe_fp_change(judge, current_fp_env()), "left FTZ/DAZ set");
  EXPECT_EQ(describe_fp_env(current_fp_env()), "FTZ/DAZ set");
  pin_judge_fp_env();
  EXPECT_GT(subnormal_sum(), 0.0);
  _mm_setcsr(_mm_getcsr() | 0x8000);  // FTZ alone
  EXPECT_NE(describe_fp_change(judge, current_fp_env()).find("left FTZ (flush to zero) set"), std::string::npos);
  pin_judge_fp_env();
}

TEST(FpEnv, AnUnmaskedExceptionIsNamedButStickyFlagsAreNot) {
  pin_judge_fp_env();
  const FpEnv judge = current_fp_env();
  volatile double zero = 0.0;
  volatile double nan = zero / zero;  // raises the invalid flag: not a change of environment
  (void)nan;
  EXPECT_EQ(current_fp_env(), judge);
  _mm_setcsr(_mm_getcsr() & ~(1u << 7));  // unmask invalid-operation
  EXPECT_EQ(describe_fp_change(judge, current_fp_env()), "left the invalid-operation exception unmasked");
  pin_judge_fp_env();
  EXPECT_EQ(current_fp_env(), judge);
}
#endif

}  // namespace
}  // namespace kc
