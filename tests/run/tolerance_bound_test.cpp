// The tolerance model's bound as the checks apply it: the case's accumulation sets it,
// rounding passes and more fails, the underflow term admits subnormal rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <string>
#include <thread>

#include <Eigen/Core>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "judge/tolerance.h"
#include "kc/report.h"
#include "kc/runner.h"
#include "run/isolate.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"
#include "support/f32_direct.h"

namespace kc {
namespace {

// A correct kernel with 16-bit accumulators: the forward summed in f16 in loop order.
class F16Accumulating final : public test::DelegatingBackend {
 public:
  F16Accumulating() : DelegatingBackend("f16-accumulating") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    const std::vector<float> z = test::f32_direct::forward<Eigen::half>(g, x, w, b);
    for (size_t i = 0; i < z.size(); ++i) y.data[i] = relu && !(z[i] > 0.0f) ? 0.0f : z[i];
    y.round_to_dtype(y.dtype);
    return ok_status();
  }
};

// accumulation: f16 judges such a kernel by the bound of f16 sums: it passes there and
// fails the default (f32 accumulation) bound; a case whose sums are too long for the f16
// bound (n * u >= 1: it allows any error) is refused, and compare_tensors given such a
// bound says MISTRUSTED, never PASSED.
TEST(Tolerance, TheCaseAccumulationSetsTheBound) {
  test::ConvSpec s{.batch = 1,
                   .channels = 16,
                   .out_channels = 4,
                   .spatial = {6, 6},
                   .kernel = {3, 3},
                   .padding = test::pad_kind(PadKind::kSame),
                   .bias = true,
                   .dtype = DType::kF16};
  Case c = test::conv_case(s);
  c.data.seed = 5;
  c.checks = {"forward"};
  F16Accumulating f16_sums;
  const CheckResult* fwd = nullptr;
  CaseResult r = check_case(c, f16_sums);
  ASSERT_NE(fwd = find_check(r, "forward"), nullptr);
  EXPECT_EQ(fwd->disposition, Disposition::kFailed) << "f16 sums judged as f32 sums: " << fwd->message;
  c.accumulation = DType::kF16;
  r = check_case(c, f16_sums);
  ASSERT_NE(fwd = find_check(r, "forward"), nullptr);
  EXPECT_EQ(fwd->disposition, Disposition::kPassed) << fwd->message;
  c.input.channels = 256;  // 2305 terms a sum: 2305 * 2^-11 >= 1
  r = check_case(c, f16_sums);
  EXPECT_EQ(r.disposition, Disposition::kInvalid) << r.message;
  EXPECT_NE(r.message.find("accumulation: f16 sums of up to 2305 terms"), std::string::npos) << r.message;
  c.tolerance = {ToleranceKind::kExplicit, 1e-2, 1e-2};  // an explicit tolerance is the way out
  EXPECT_NE(check_case(c, f16_sums).disposition, Disposition::kInvalid);
  Tensor ref = Tensor::zeros(DType::kF64, {2});
  ref.data = {1.0, 0.0};  // abs_sum 0 at the second: no inf * 0 = NaN bound either
  CheckResult unbounded;
  compare_tensors("y", ref, ref, &ref, ToleranceSpec{{}, DType::kF16, 4096, DType::kF16}, unbounded);
  EXPECT_EQ(unbounded.disposition, Disposition::kMistrusted) << unbounded.message;
  EXPECT_NE(unbounded.message.find("the bound allows any error at 2 of 2"), std::string::npos) << unbounded.message;
  EXPECT_NE(unbounded.message.find("n * u >= 1"), std::string::npos) << unbounded.message;
  // A short f64 sum whose terms include an infinity made finite again (relu(-inf) = 0)
  // is unbounded for that reason, and says so rather than blaming the sum's length.
  Tensor inf_abs = ref;
  inf_abs.data = {2.0, INFINITY};
  CheckResult relu_of_inf;
  compare_tensors("y", ref, ref, &inf_abs, ToleranceSpec{{}, DType::kF64, 5}, relu_of_inf);
  EXPECT_EQ(relu_of_inf.disposition, Disposition::kMistrusted) << relu_of_inf.message;
  EXPECT_NE(relu_of_inf.message.find("the bound allows any error at 1 of 2 elements (an infinite input reaches them"),
            std::string::npos)
      << relu_of_inf.message;
  EXPECT_EQ(relu_of_inf.message.find("n * u >= 1"), std::string::npos) << relu_of_inf.message;
}

TEST(Tolerance, BoundAdmitsRoundingAndRejectsMore) {
  Tensor ref = Tensor::zeros(DType::kF64, {3});
  ref.data = {1.0, -2.0, 0.5};
  Tensor abs = ref;
  for (double& v : abs.data) v = std::abs(v) * 10;  // sum |a_i b_i| ten times |ref|
  ToleranceSpec spec{{}, DType::kF32, 16};
  const double bound0 = kBoundSafety * gamma_n(16, unit_roundoff(DType::kF32)) * 10.0 + unit_roundoff(DType::kF32);
  Tensor cand = ref;
  cand[0] += 0.9 * bound0;
  CheckResult ok;
  compare_tensors("y", cand, ref, &abs, spec, ok);
  EXPECT_EQ(ok.disposition, Disposition::kPassed);
  EXPECT_NEAR(ok.max_error_ratio, 0.9, 1e-6);
  ASSERT_EQ(ok.worst.size(), 1u);  // a pass names its element nearest the bound
  EXPECT_EQ(ok.worst[0].index, (std::vector<int64_t>{0}));
  EXPECT_EQ(ok.worst[0].candidate, cand[0]);
  cand[0] = ref[0] + 1.1 * bound0;
  Tensor near = ref;
  near[1] += 0.5 * element_bound(spec, ref[1], abs[1]);
  CheckResult bad;
  compare_tensors("dx", near, ref, &abs, spec, bad);  // a first tensor that passes, near its bound
  ASSERT_EQ(bad.worst.size(), 1u);
  compare_tensors("y", cand, ref, &abs, spec, bad);
  EXPECT_EQ(bad.disposition, Disposition::kFailed);
  ASSERT_EQ(bad.worst.size(), 1u);  // the failure only
  EXPECT_EQ(bad.worst[0].index, (std::vector<int64_t>{0}));
  EXPECT_EQ(bad.worst[0].candidate, cand[0]);
  CheckResult later;
  compare_tensors("dx", Tensor(ref), ref, &abs, spec, later);
  compare_tensors("dx", near, ref, &abs, spec, later);
  compare_tensors("y", cand, ref, &abs, spec, later);  // a pass's closest point gives way to failures
  ASSERT_EQ(later.worst.size(), 1u);
  EXPECT_EQ(later.worst[0].tensor, "y");
}

TEST(Tolerance, UnderflowTermAdmitsRoundingInTheSubnormalRange) {
  // Found by kcheck fuzz: an f32 output of 4.2e-45 (3 subnormal units) against a
  // reference of 3.8e-45 is one subnormal rounding, not an error.
  Tensor ref = Tensor::filled(DType::kF64, {1}, 3.8e-45);
  Tensor cand = Tensor::filled(DType::kF64, {1}, 4.2e-45);
  CheckResult ok;
  compare_tensors("y", cand, ref, &ref, ToleranceSpec{{}, DType::kF32, 1}, ok);
  EXPECT_EQ(ok.disposition, Disposition::kPassed);
  // Ten subnormal units off is more than the rounding of one product can explain.
  cand[0] = 3.8e-45 + 10 * 1.4e-45;
  CheckResult bad;
  compare_tensors("y", cand, ref, &ref, ToleranceSpec{{}, DType::kF32, 1}, bad);
  EXPECT_EQ(bad.disposition, Disposition::kFailed);
}

}  // namespace
}  // namespace kc
