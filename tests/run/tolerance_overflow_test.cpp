// compare_tensors' allowance for sums whose finite terms pass the accumulator's range
// (judge/tolerance.h, ToleranceSpec::finite_terms): there a correct kernel may give NaN or
// an infinity; just below the range, nothing is allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "judge/tolerance.h"

namespace kc {
namespace {

const double kF32Max = std::numeric_limits<float>::max();

// An f32 output whose oracle value is 1 (max - max + 1, say) and whose finite terms'
// magnitudes add up to `terms`; the candidate returns `got`. Beside it, unless `alone`,
// an ordinary element the candidate gets right.
CheckResult judge(double terms, double got, bool alone = false) {
  Tensor ref = Tensor::zeros(DType::kF64, {alone ? 1 : 2});
  ref.data = alone ? HostVector<double>{1.0} : HostVector<double>{1.0, 0.5};
  Tensor abs = ref;
  abs.data = alone ? HostVector<double>{terms} : HostVector<double>{terms, 1.0};
  Tensor cand = ref;
  cand.data[0] = got;
  const ToleranceSpec f32{{}, DType::kF32, 3};
  CheckResult r;
  compare_tensors("y", cand, ref, &abs, f32, r);
  return r;
}

TEST(ToleranceOverflow, NonFiniteIsAllowedWhereTheFiniteTermsPassTheAccumulatorsRange) {
  const double past = 2.0 * kF32Max;  // finite in f64, past f32's range
  for (double got : {std::numeric_limits<double>::quiet_NaN(), double{INFINITY}, -double{INFINITY}}) {
    const CheckResult r = judge(past, got);
    EXPECT_EQ(r.disposition, Disposition::kPassed) << got << ": " << r.message;
    EXPECT_NE(r.message.find("partial sums may overflow"), std::string::npos) << r.message;
  }
  // A finite value is still judged by the bound there (equal: never a failure).
  EXPECT_NE(judge(past, 1.0).disposition, Disposition::kFailed);
}

// A tensor whose every element is left to the allowance says nothing of the kernel.
TEST(ToleranceOverflow, ATensorWithNothingJudgedIsMistrusted) {
  const CheckResult r = judge(2.0 * kF32Max, INFINITY, true);
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << r.message;
  EXPECT_NE(r.message.find("no element could be judged"), std::string::npos) << r.message;
}

// Just outside: an accumulator that overflows at half of f32's range (trap
// doubled_accumulator) gives inf where the terms add up to 0.75 of it.
TEST(ToleranceOverflow, NonFiniteFailsWhereTheFiniteTermsStayWithinTheRange) {
  for (double got : {std::numeric_limits<double>::quiet_NaN(), double{INFINITY}}) {
    const CheckResult r = judge(0.75 * kF32Max, got);
    EXPECT_EQ(r.disposition, Disposition::kFailed) << got << ": " << r.message;
  }
  EXPECT_EQ(judge(kF32Max, INFINITY).disposition, Disposition::kFailed);  // at the range, not past it
}

// An infinity among the inputs makes the whole absolute sum infinite; only the finite
// part decides whether an accumulator may overflow. Where it stays in range, a NaN for
// the oracle's inf is a bug (inf - inf is not a correct kernel's to form).
TEST(ToleranceOverflow, TheFinitePartDecidesWhereAnInfinityReachesTheSum) {
  Tensor ref = Tensor::zeros(DType::kF64, {1});
  ref.data = {INFINITY};
  Tensor abs = ref;
  Tensor cand = ref;
  cand.data = {std::numeric_limits<double>::quiet_NaN()};
  Tensor part = ref;
  for (double finite : {0.5 * kF32Max, 2.0 * kF32Max}) {
    part.data = {finite};
    ToleranceSpec f32{{}, DType::kF32, 3};
    f32.finite_terms = &part;
    CheckResult r;
    compare_tensors("y", cand, ref, &abs, f32, r);
    EXPECT_EQ(r.disposition != Disposition::kFailed, finite > kF32Max) << finite;  // alone: allowed is MISTRUSTED
  }
  // Without the finite part an infinite absolute sum proves nothing: judged strictly.
  ToleranceSpec f32{{}, DType::kF32, 3};
  CheckResult r;
  compare_tensors("y", cand, ref, &abs, f32, r);
  EXPECT_EQ(r.disposition, Disposition::kFailed);
}

// An average's absolute pass holds sum |x| / divisor; a kernel may divide last, so the
// range is judged on the undivided sum.
TEST(ToleranceOverflow, AnAveragesDivisorScalesItsSum) {
  ToleranceSpec f32{{}, DType::kF32, 5};
  EXPECT_FALSE(accumulator_may_overflow(f32, 0, 0.4 * kF32Max));
  f32.sum_scale = 4.0;
  EXPECT_TRUE(accumulator_may_overflow(f32, 0, 0.4 * kF32Max));
}

// relu of a sum that overflowed to -inf is 0: allowed after a fused relu where the terms
// pass the range, a failure (far outside the bound) where they do not.
TEST(ToleranceOverflow, ReluOfAnOverflowedSumMayBeZero) {
  for (double terms : {3.0 * kF32Max, 0.5 * kF32Max}) {
    Tensor ref = Tensor::zeros(DType::kF64, {1});
    ref.data = {1e37};
    Tensor abs = ref;
    abs.data = {terms};
    Tensor cand = ref;
    cand.data = {0.0};
    ToleranceSpec y{{}, DType::kF32, 3};
    y.relu_output = true;
    CheckResult r;
    compare_tensors("y", cand, ref, &abs, y, r);
    EXPECT_EQ(r.disposition != Disposition::kFailed, terms > kF32Max) << r.message;
  }
}

}  // namespace
}  // namespace kc
