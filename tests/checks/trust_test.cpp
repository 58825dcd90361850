// The trust rule's geometry (docs/checks.md, "Trust"): a conv's dx is judged on the
// input elements some window reads (conv_input_read, distrust_output), so zeros that a
// stride or padding alone makes do not mistrust a case, while a dx of zeros still fails.
// And the tolerance model's own trust rule: a bound that reaches 0 at every element; and
// the rule's non-finite constants (one NaN or infinity everywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "judge/tolerance.h"
#include "kc/runner.h"
#include "math_support.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

// A 3-D conv with kernel 1 and stride 3 reads one input element in 27: the other 26
// have dx 0 whatever the data. The trust rule judges dx on the elements some window
// reads, so such a case is checked, not MISTRUSTED; a dx of zeros still fails.
TEST(BackwardCheck, DxThatTheGeometryMakesZeroIsJudgedOnTheElementsWindowsRead) {
  Case c = test::conv_case({.batch = 1,
                            .channels = 2,
                            .out_channels = 3,
                            .spatial = {6, 6, 6},
                            .kernel = {1, 1, 1},
                            .stride = {3, 3, 3},
                            .padding = test::pad_kind(PadKind::kValid)});
  c.data.seed = 21;
  c.checks = {"backward", "gradcheck"};
  const ConvGeometry g = *conv_geometry(c);
  const std::vector<char> read = conv_input_read(g);
  ASSERT_EQ(read.size(), 2u * 216u);
  EXPECT_EQ(std::count(read.begin(), read.end(), 1), 2 * 8);  // coordinates 0 and 3 in each dim
  EXPECT_TRUE(read[0] && read[3] && !read[1] && read[3 * 36 + 3 * 6 + 3] && !read[216 + 1]);
  test::DelegatingBackend right("right");
  const CaseResult ok = check_case(c, right);
  for (const char* name : {"backward", "gradcheck"}) {
    const CheckResult* k = find_check(ok, name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->disposition, Disposition::kPassed) << name << ": " << k->message;
  }
  const OpInputs in = *make_inputs(c);
  const OpOutputs ref = invoke(right, c, OpGeometry{g}, in);
  EXPECT_NE(distrust("dx", ref.dx).find("is mostly zero (416 of 432)"), std::string::npos);  // the plain rule
  EXPECT_EQ(distrust_output(OpGeometry{g}, "dx", ref.dx), "");
  Tensor sparse = ref.dx;  // all but the first element windows read set to 0
  for (int64_t i = 1; i < sparse.size(); ++i) sparse[i] = 0.0;
  EXPECT_NE(distrust_output(OpGeometry{g}, "dx", sparse).find("mostly zero (15 of 16 elements some window reads)"),
            std::string::npos)
      << distrust_output(OpGeometry{g}, "dx", sparse);
  math_test::PlantedBackward zero([](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor& dx,
                                     Tensor&, Tensor*) { std::fill(dx.data.begin(), dx.data.end(), 0.0); });
  const CheckResult* bad = find_check(check_case(c, zero), "backward");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->disposition, Disposition::kFailed) << bad->message;
}

// Reflect padding copies border elements into the padding, so a window that reads only
// padding still reads them: they count as read.
TEST(BackwardCheck, PaddingCopiesCountAsReadForTheTrustRule) {
  const Case c = test::conv_case({.spatial = {5},
                                  .kernel = {1},
                                  .stride = {3},
                                  .padding = test::explicit_pad({{2, 2}}),
                                  .mode = PaddingMode::kReflect});
  const ConvGeometry g = *conv_geometry(c);
  // Padded coordinates 0, 3, 6 are inputs -2 (reflect: 2), 1 and 4.
  EXPECT_EQ(conv_input_read(g), (std::vector<char>{0, 1, 1, 0, 1}));
  Case zeros = c;
  std::get<ConvParams>(zeros.op).padding_mode = PaddingMode::kZeros;
  EXPECT_EQ(conv_input_read(*conv_geometry(zeros)), (std::vector<char>{0, 1, 0, 0, 1}));
  // Every window on zero padding alone: dx is zero by construction, and says so.
  const Case unread = test::conv_case(
      {.spatial = {1}, .kernel = {1}, .stride = {2}, .padding = test::explicit_pad({{1, 0}}), .bias = true});
  const ConvGeometry ug = *conv_geometry(unread);
  EXPECT_EQ(conv_input_read(ug), std::vector<char>{0});
  EXPECT_EQ(distrust_output(OpGeometry{ug}, "dx", Tensor::zeros(DType::kF64, {1, 1, 1})),
            "reference dx is all zero: no window reads any element of x");
}

// Sums of 128 terms accumulated in bf16 may be off by 2 gamma(128, 2^-8) = 2 times their
// terms' absolute sum: every value lies within its bound of 0, so a tensor of zeros
// passes the comparison as well, and a pass is MISTRUSTED. With f32 accumulation the
// same values are judged; a reference of zeros is the distrust rule's, not this one's.
TEST(Tolerance, ABoundThatReachesZeroAtEveryElementIsMistrusted) {
  const Tensor ref{DType::kF64, {3}, {1.5, -2.0, 0.25}}, abs{DType::kF64, {3}, {4.0, 3.0, 1.0}};
  const Tensor zeros = Tensor::filled(DType::kBF16, {3}, 0.0);
  ToleranceSpec bf16_sums{{}, DType::kBF16, 128};
  bf16_sums.accumulation = DType::kBF16;
  for (const Tensor* cand : {&ref, &zeros}) {
    CheckResult r;
    compare_tensors("dw", *cand, ref, &abs, bf16_sums, r);
    EXPECT_EQ(r.disposition, Disposition::kMistrusted) << r.message;
    EXPECT_NE(r.message.find("dw: the bound reaches 0 at every element, so a kernel that writes zeros would pass "
                             "(a sum of 128 terms in bf16 may be off by 2 of its terms' absolute sum"),
              std::string::npos)
        << r.message;
  }
  const ToleranceSpec f32_sums{{}, DType::kBF16, 128};
  CheckResult same, zero, all_zero;
  compare_tensors("dw", ref, ref, &abs, f32_sums, same);
  EXPECT_EQ(same.disposition, Disposition::kPassed) << same.message;
  compare_tensors("dw", zeros, ref, &abs, f32_sums, zero);
  EXPECT_EQ(zero.disposition, Disposition::kFailed) << zero.message;
  compare_tensors("dw", zeros, Tensor::filled(DType::kF64, {3}, 0.0), &abs, bf16_sums, all_zero);
  EXPECT_EQ(all_zero.disposition, Disposition::kPassed) << all_zero.message;
}

// One non-finite value everywhere is a constant too: on an all-NaN x, y and dw are NaN
// at every element whatever the sum (a mean, one position's), so a pass proves nothing
// of the arithmetic and is MISTRUSTED. A mix of NaN and infinities is judged: a kernel
// writing one constant fails it.
TEST(Trust, OneNonFiniteValueAtEveryElementIsMistrustedAMixIsJudged) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_NE(distrust("dw", Tensor{DType::kF64, {2}, {nan, nan}})
                .find("dw is NaN at every element: a kernel that "
                      "writes NaN would pass"),
            std::string::npos);
  EXPECT_NE(distrust("y", Tensor{DType::kF64, {2}, {inf, inf}}).find("y is +inf at every element"), std::string::npos);
  EXPECT_NE(distrust("y", Tensor{DType::kF64, {1}, {-inf}}).find("y is -inf at every element"), std::string::npos);
  EXPECT_EQ(distrust("dw", Tensor{DType::kF64, {3}, {nan, -inf, nan}}), "");
  EXPECT_EQ(distrust("dw", Tensor{DType::kF64, {2}, {inf, -inf}}), "");

  Case c = test::conv_case({.batch = 2, .channels = 2, .out_channels = 2, .spatial = {6}, .kernel = {3}});
  c.tensors["x"] = Tensor::filled(DType::kF64, {2, 2, 6}, nan);
  c.checks = {"forward", "backward"};
  test::DelegatingBackend right("right");
  const CaseResult r = check_case(c, right);
  for (const char* name : {"forward", "backward"}) {
    const CheckResult* k = find_check(r, name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->disposition, Disposition::kMistrusted) << name << ": " << k->message;
    EXPECT_NE(k->message.find("is NaN at every element"), std::string::npos) << k->message;
  }
}

// An f64 output that overflows from finite inputs is not finite in the oracle either:
// gradcheck and adjoint cannot judge it and say why, on the oracle itself too.
TEST(Trust, AnF64SumThatOverflowsIsNotJudgedByDifferences) {
  Case c = test::conv_case({.spatial = {4}, .kernel = {2}});
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 4}, {1.5e308, 1.0e308, 1.0, 2.0}};
  c.tensors["w"] = Tensor{DType::kF64, {1, 1, 2}, {1.5, 1.5}};
  c.checks = {"gradcheck", "adjoint"};
  auto oracle = make_reference_backend();
  const CaseResult r = check_case(c, *oracle);
  for (const char* name : {"gradcheck", "adjoint"}) {
    const CheckResult* k = find_check(r, name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->disposition, Disposition::kSkipped) << name << ": " << k->message;
    EXPECT_NE(k->message.find("the oracle's y is not finite although every input is (a sum overflows f64)"),
              std::string::npos)
        << k->message;
  }
}

}  // namespace
}  // namespace kc
