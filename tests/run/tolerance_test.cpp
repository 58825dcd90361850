// compare_tensors (judge/tolerance.h) element by element: values the dtype cannot hold,
// NaN and infinities, overflow to inf, slack, and exact.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "judge/tolerance.h"

namespace kc {
namespace {

// A failing output that holds values its dtype cannot (a backend that never rounded its
// f64 results) says so, with the first such element: the overflow that did not happen
// is not the arithmetic's fault. Values the dtype holds, and passes, say nothing of it.
TEST(Tolerance, AFailureNamesValuesTheDtypeCannotHold) {
  Tensor ref = Tensor::zeros(DType::kF64, {1, 3});
  ref.data = {INFINITY, -25600.0, -51456.0};
  Tensor abs = ref;
  abs.data = {76800.0, 25600.0, 51456.0};
  const ToleranceSpec f16{{}, DType::kF16, 2};
  Tensor cand = ref;
  cand.data = {76800.0, -25600.0, -51456.0};
  CheckResult unrounded;
  compare_tensors("y", cand, ref, &abs, f16, unrounded);
  EXPECT_EQ(unrounded.disposition, Disposition::kFailed);
  EXPECT_NE(unrounded.message.find("(1 value not representable in f16: y[0,0] = 76800; a backend rounds its "
                                   "outputs to the case dtype)"),
            std::string::npos)
      << unrounded.message;
  cand.data = {65504.0, -25600.0, -51456.1};  // a saturated 65504, and one more f16 misfit
  CheckResult saturated;
  compare_tensors("y", cand, ref, &abs, f16, saturated);
  EXPECT_NE(saturated.message.find("(1 value not representable in f16: y[0,2] = -51456.099999999999;"),
            std::string::npos)
      << saturated.message;
  cand.data = {65504.0, -25600.0, -51456.0};
  CheckResult stored;
  compare_tensors("y", cand, ref, &abs, f16, stored);
  EXPECT_EQ(stored.disposition, Disposition::kFailed);
  EXPECT_EQ(stored.message.find("not representable"), std::string::npos) << stored.message;
  // A pass says nothing of it: values within the bound that f16 cannot hold.
  Tensor finite_ref = ref;
  finite_ref.data = {1000.0, -25600.0, -51456.0};
  cand.data = {1000.0 + 1e-9, -25600.0, -51456.0};
  CheckResult passes;
  compare_tensors("y", cand, finite_ref, &abs, f16, passes);
  EXPECT_EQ(passes.disposition, Disposition::kPassed) << passes.message;
  EXPECT_EQ(passes.message.find("not representable"), std::string::npos) << passes.message;
  ToleranceSpec oracle = f16;
  oracle.cand_unrounded = true;  // the f64 oracle: its values are unrounded by definition
  cand.data = {1e6, -25600.0, -51456.0};
  CheckResult f64;
  compare_tensors("y", cand, ref, &abs, oracle, f64);
  EXPECT_EQ(f64.message.find("not representable"), std::string::npos) << f64.message;
}

// bf16 sums formed in bf16 (PyTorch 1.13's CPU pooling backward): an error within what
// n roundings to bf16 lose is named so; one past it (a lost term) is not, nor is the same
// error in f32 storage, whose accumulator is f64-free f32 too.
TEST(Tolerance, AnErrorWithinBf16SumsIsNamed) {
  Tensor ref = Tensor::zeros(DType::kF64, {1, 2});
  ref.data = {0.0036078559, 1.0};
  Tensor abs = ref;
  abs.data = {0.05, 1.0};  // nine terms of 0.0055 in magnitude, cancelling
  const ToleranceSpec bf16{{}, DType::kBF16, 9};
  Tensor cand = ref;
  cand.data = {0.00311279297, 1.0};  // 4.9e-4 off: 9 x 2^-8 x 0.05 = 1.8e-3 allows it
  CheckResult narrow;
  compare_tensors("dx", cand, ref, &abs, bf16, narrow);
  EXPECT_EQ(narrow.disposition, Disposition::kFailed);
  EXPECT_NE(narrow.message.find("(all within what sums rounded to bf16 can lose: summed in bf16, not accumulated "
                                "in f32)"),
            std::string::npos)
      << narrow.message;
  // A failure that names no bf16 sums, for cand's first element `got` under `spec`.
  auto fails_unnamed = [&](double got, const ToleranceSpec& spec, const char* what) {
    cand.data = {got, 1.0};
    CheckResult r;
    compare_tensors("dx", cand, ref, &abs, spec, r);
    EXPECT_EQ(r.disposition, Disposition::kFailed) << what;
    EXPECT_EQ(r.message.find("summed in"), std::string::npos) << what << ": " << r.message;
  };
  fails_unnamed(0.0036078559 - 0.01, bf16, "past even bf16 sums: a term lost");
  // Long bf16 sums explain any error in the worst case: no cause is named then.
  fails_unnamed(0.0, ToleranceSpec{{}, DType::kBF16, 300}, "300 bf16 terms");
  fails_unnamed(0.00311279297, ToleranceSpec{{}, DType::kF32, 9}, "the same error in f32 storage");
}

// A declared flush's allowance grows with the largest input; at f64's edge it is
// infinite, and the message says so rather than blaming the sums' length.
TEST(Tolerance, AnInfiniteFlushAllowanceIsNamed) {
  Tensor ref = Tensor::zeros(DType::kF64, {1, 1});
  ref.data = {1.0};
  Tensor abs = ref;
  ToleranceSpec flush{{}, DType::kF64, 3};
  flush.flush_atol = INFINITY;
  CheckResult r;
  compare_tensors("y", ref, ref, &abs, flush, r);
  EXPECT_EQ(r.disposition, Disposition::kMistrusted);
  EXPECT_NE(r.message.find("the declared subnormal flush allows 2^emin per term times the largest input"),
            std::string::npos)
      << r.message;
}

// f64 data summed in f64: the oracle's partial sums overflow as a kernel's may, so its
// -inf beside a finite value of another order is unjudged, not "±inf became finite";
// where an infinite input reaches the element (or nothing says none does) the oracle's
// infinity stands.
TEST(Tolerance, TheOraclesOwnOverflowInF64IsNoTruth) {
  Tensor ref = Tensor::zeros(DType::kF64, {1, 2});
  ref.data = {-INFINITY, 1.0};
  Tensor abs = ref;
  abs.data = {INFINITY, 1.0};  // |terms| past f64's range
  Tensor cand = ref;
  cand.data = {-7.1202792e+307, 1.0};
  ToleranceSpec f64{{}, DType::kF64, 27};
  f64.finite_terms = &abs;
  f64.inputs_finite = true;
  CheckResult order;
  compare_tensors("y", cand, ref, &abs, f64, order);
  EXPECT_EQ(order.disposition, Disposition::kPassed) << order.message;
  EXPECT_NE(order.message.find("y: 1 unjudged or non-finite"), std::string::npos) << order.message;
  ToleranceSpec unknown = f64;
  unknown.inputs_finite = false;  // and no reach known: the infinity stands
  CheckResult strict;
  compare_tensors("y", cand, ref, &abs, unknown, strict);
  EXPECT_EQ(strict.disposition, Disposition::kFailed);
  EXPECT_NE(strict.message.find("±inf became finite"), std::string::npos) << strict.message;
  Tensor reach = ref;
  reach.data = {kNonfiniteMark, 27.0};  // an infinite input reaches element 0
  ToleranceSpec reached = unknown;
  reached.nonfinite_reach = &reach;
  CheckResult inf_input;
  compare_tensors("y", cand, ref, &abs, reached, inf_input);
  EXPECT_EQ(inf_input.disposition, Disposition::kFailed);
  reach.data = {27.0, 27.0};  // none does
  CheckResult none;
  compare_tensors("y", cand, ref, &abs, reached, none);
  EXPECT_EQ(none.disposition, Disposition::kPassed) << none.message;
  ToleranceSpec f32{{}, DType::kF32, 27};  // the oracle's f64 sums of f32 terms never overflow
  Tensor abs32 = abs;
  abs32.data = {1e39, 1.0};
  f32.finite_terms = &abs32;
  f32.inputs_finite = true;
  cand.data = {-3.0e38, 1.0};
  CheckResult narrow;
  compare_tensors("y", cand, ref, &abs32, f32, narrow);
  EXPECT_EQ(narrow.disposition, Disposition::kFailed);
  // Even f64's largest of the other sign may be another order's sum there: unjudged.
  cand.data = {1.7976931348623157e308, 1.0};
  CheckResult largest;
  compare_tensors("y", cand, ref, &abs, f64, largest);
  EXPECT_EQ(largest.disposition, Disposition::kPassed) << largest.message;
}

// Slack (a relu mask the data cannot decide) lets the right value lie on either side of
// ref: an infinity is right where ref moved by the slack toward it overflows the dtype
// (dy = f32's largest times x = 1.5 at an ambiguous pre-activation), not where it stays
// finite.
TEST(Tolerance, SlackThatPassesTheRangeAllowsAnInfinity) {
  Tensor ref = Tensor::zeros(DType::kF64, {1, 1});
  ref.data = {-0.0653970979765548};
  Tensor abs = ref;
  abs.data = {0.0653970979765548};
  Tensor cand = ref;
  cand.data = {INFINITY};
  const ToleranceSpec f32{{}, DType::kF32, 20};
  Tensor slack = ref;
  slack.data = {5.104235199577933e+38};
  CheckResult reaches;
  compare_tensors("dw", cand, ref, &abs, f32, reaches, &slack);
  EXPECT_EQ(reaches.disposition, Disposition::kPassed) << reaches.message;
  slack.data = {1e38};  // -0.065 + 1e38 stays finite in f32
  CheckResult short_of;
  compare_tensors("dw", cand, ref, &abs, f32, short_of, &slack);
  EXPECT_EQ(short_of.disposition, Disposition::kFailed);
  EXPECT_NE(short_of.message.find("dw: 1 of 1 elements outside the tolerance"), std::string::npos) << short_of.message;
  // The output rounding's own allowance does not count: f16's 65504 with a little slack
  // is no infinity, nor is anything where the allowance is unbounded.
  const ToleranceSpec f16{{}, DType::kF16, 2};
  ref.data = {65504.0};
  abs.data = {65504.0};
  slack.data = {1.0};
  CheckResult representable;
  compare_tensors("dw", cand, ref, &abs, f16, representable, &slack);
  EXPECT_EQ(representable.disposition, Disposition::kFailed) << representable.message;
  ToleranceSpec unbounded = f32;
  unbounded.flush_atol = INFINITY;
  ref.data = {-0.0653970979765548};
  abs.data = {0.0653970979765548};
  CheckResult any;
  compare_tensors("dw", cand, ref, &abs, unbounded, any, &slack);
  EXPECT_NE(any.disposition, Disposition::kPassed) << any.message;
}

TEST(Tolerance, NaNIsNeverAWildcard) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  Tensor ref = Tensor::zeros(DType::kF64, {4});
  ref.data = {nan, inf, 1.0, -inf};
  ToleranceSpec spec{{ToleranceKind::kExplicit, 1e-3, 1e-3}, DType::kF32, 1};
  Tensor same = ref;
  CheckResult r1;
  compare_tensors("y", same, ref, nullptr, spec, r1);
  EXPECT_EQ(r1.disposition, Disposition::kPassed);
  for (int i = 0; i < 4; ++i) {
    Tensor cand = ref;
    cand[i] = i == 0 ? 0.0 : (i == 2 ? nan : -cand[i]);  // NaN lost, inf sign flipped, NaN appears
    CheckResult r;
    compare_tensors("y", cand, ref, nullptr, spec, r);
    EXPECT_EQ(r.disposition, Disposition::kFailed) << "element " << i;
  }
}

// A value past the output dtype's largest finite one rounds to inf there: a correct f16
// kernel gives inf for 76800, a saturating one 65504, which fails; and inf for 65000, or
// inf of the other sign, fails too. Golden runs it the other way round: expected inf
// meets the f64 oracle's 76800, never a stored 65504.
TEST(Tolerance, OverflowToInfinityAgreesWithAFiniteValueThatRoundsToIt) {
  const double inf = INFINITY;
  ToleranceSpec spec{{}, DType::kF16, 2};
  auto verdict = [&](double cand, double ref, bool unrounded = false) {
    CheckResult r;
    const Tensor c{unrounded ? DType::kF64 : DType::kF16, {1}, {cand}}, f{DType::kF64, {1}, {ref}};
    ToleranceSpec s = spec;
    s.cand_unrounded = unrounded;
    compare_tensors("y", c, f, nullptr, s, r);
    return r.disposition;
  };
  EXPECT_EQ(verdict(inf, 76800.0), Disposition::kPassed);
  EXPECT_EQ(verdict(-inf, -76800.0), Disposition::kPassed);
  EXPECT_EQ(verdict(76800.0, inf, true), Disposition::kPassed);  // golden on the f64 oracle
  EXPECT_EQ(verdict(65504.0, inf), Disposition::kFailed);        // golden on a saturating kernel
  EXPECT_EQ(verdict(65504.0, 76800.0), Disposition::kFailed);
  EXPECT_EQ(verdict(inf, 65000.0), Disposition::kFailed);
  EXPECT_EQ(verdict(-inf, 76800.0), Disposition::kFailed);
  EXPECT_EQ(verdict(60000.0, inf, true), Disposition::kFailed);
  EXPECT_EQ(verdict(65504.0, inf, false), Disposition::kFailed);  // a candidate's stored value is final
  EXPECT_EQ(verdict(inf, 65504.0), Disposition::kFailed);         // f16's largest finite value does not overflow
  EXPECT_EQ(verdict(-inf, -65504.0), Disposition::kFailed);
  EXPECT_EQ(verdict(inf, 65530.0), Disposition::kPassed);  // 65530 is past 65520, f16's overflow point
  EXPECT_EQ(verdict(inf, 65400.0), Disposition::kFailed);  // within the bound, still below it
  {  // an infinity that an inf input made (its absolute sum is inf), clamped: FAILED, not MISTRUSTED
    CheckResult r;
    const Tensor clamped{DType::kF16, {1}, {65504.0}}, want{DType::kF64, {1}, {inf}}, abs{DType::kF64, {1}, {inf}};
    ToleranceSpec unrounded = spec;
    unrounded.cand_unrounded = true;
    compare_tensors("y", clamped, want, &abs, unrounded, r);
    EXPECT_EQ(r.disposition, Disposition::kFailed) << r.message;
  }
  spec.storage = DType::kF32;
  EXPECT_EQ(verdict(inf, 76800.0), Disposition::kFailed);  // no overflow in f32
  spec = ToleranceSpec{{ToleranceKind::kExact}, DType::kF16, 1};
  EXPECT_EQ(verdict(inf, 76800.0), Disposition::kPassed);
  EXPECT_EQ(verdict(inf, 65504.0), Disposition::kFailed);
}

// Slack (a contribution a correct kernel may or may not include) moves the value a kernel
// rounds to the output dtype: that rounding is relative to the moved value, not to ref.
TEST(Tolerance, SlackCarriesItsOwnOutputRounding) {
  const Tensor ref{DType::kF64, {1}, {0.140701771}}, slack{DType::kF64, {1}, {0.456}};
  const Tensor moved{DType::kBF16, {1}, {round_to(DType::kBF16, 0.140701771 + 0.456)}};  // 0.59765625
  CheckResult r;
  compare_tensors("dx", moved, ref, nullptr, ToleranceSpec{{}, DType::kBF16, 1}, r, &slack);
  EXPECT_EQ(r.disposition, Disposition::kPassed) << r.message;
  const Tensor beyond{DType::kBF16, {1}, {0.60546875}};  // the next bf16 value up
  CheckResult b;
  compare_tensors("dx", beyond, ref, nullptr, ToleranceSpec{{}, DType::kBF16, 1}, b, &slack);
  EXPECT_EQ(b.disposition, Disposition::kFailed);
}

TEST(Tolerance, ExactDemandsBitwiseEquality) {
  Tensor ref = Tensor::filled(DType::kF64, {2}, 3.0);
  Tensor cand = ref;
  cand[1] = std::nextafter(3.0, 4.0);
  CheckResult r;
  compare_tensors("y", cand, ref, nullptr, ToleranceSpec{{ToleranceKind::kExact}, DType::kF32, 1}, r);
  EXPECT_EQ(r.disposition, Disposition::kFailed);
}

// y of a relu where the pre-activation was -inf (its terms' absolute sum is infinite)
// and the oracle's y is 0: a correct kernel's relu gives 0 there too, so that element is
// judged exactly (either sign of zero) instead of allowing any error; elsewhere, or
// without a relu, such an element stays unbounded.
TEST(Tolerance, ReluOfMinusInfinityIsJudgedAsZero) {
  Tensor ref = Tensor::zeros(DType::kF64, {3});
  ref.data = {0.0, 0.5, 0.0};
  Tensor abs = ref;
  abs.data = {INFINITY, 1.0, 2.0};
  ToleranceSpec relu{{}, DType::kF16, 10};
  relu.relu_output = true;
  for (double zero : {0.0, -0.0}) {
    Tensor cand = ref;
    cand[0] = zero;
    CheckResult r;
    compare_tensors("y", cand, ref, &abs, relu, r);
    EXPECT_EQ(r.disposition, Disposition::kPassed) << r.message;
  }
  for (double wrong : {0x1p-24, -1.0, std::numeric_limits<double>::quiet_NaN(), -double{INFINITY}}) {
    Tensor cand = ref;
    cand[0] = wrong;
    CheckResult r;
    compare_tensors("y", cand, ref, &abs, relu, r);
    EXPECT_EQ(r.disposition, Disposition::kFailed) << wrong << ": " << r.message;
    ASSERT_FALSE(r.worst.empty());
    EXPECT_EQ(r.worst[0].index, std::vector<int64_t>{0});
  }
  CheckResult plain;
  compare_tensors("y", ref, ref, &abs, ToleranceSpec{{}, DType::kF16, 10}, plain);
  EXPECT_EQ(plain.disposition, Disposition::kMistrusted) << plain.message;
}

}  // namespace
}  // namespace kc
