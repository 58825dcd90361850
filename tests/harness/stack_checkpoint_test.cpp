// checkpoint on a backend that sums in any order (deterministic: false): a difference
// between the policies' gradients that sums in another order can make is reported, not
// failed, even where two runs without checkpointing happen to agree (atomics that add in
// one order on an idle device and in another after recomputation); a larger one, a
// recomputation that changes the values, fails; deterministic: true requires bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/delegating_backend.h"
#include "kc/runner.h"

namespace kc {
namespace {

Case f32_stack(bool deterministic) {
  Case c;
  c.name = "checkpoint order noise";
  c.dtype = DType::kF32;
  c.input = {2, 2, {10, 10}};
  StackParams p;
  p.depth = 6;
  p.conv.out_channels = 3;
  p.conv.kernel = {3, 3};
  p.conv.padding.kind = PadKind::kSame;
  p.conv.bias = true;
  p.checkpoint = {CheckpointKind::kSqrt, 0};
  c.op = p;
  c.data.seed = 5;
  c.deterministic = deterministic;
  return c;
}

// dw scaled by (1 + scale) on a backward call that follows a forward call: the same in
// every run of one schedule, different under recomputation, as an order of atomic adds
// that depends on what ran before.
class ScheduleDependentWeightGradient final : public test::DelegatingBackend {
 public:
  explicit ScheduleDependentWeightGradient(double scale) : DelegatingBackend("schedule_dw"), scale_(scale) {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    after_forward_ = true;
    return reference().conv_forward(g, x, w, b, relu, y);
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (after_forward_) {
      for (double& v : dw.data) v *= 1.0 + scale_;
    }
    after_forward_ = false;
    return ok_status();
  }

 private:
  double scale_;
  bool after_forward_ = false;
};

const CheckResult& checkpoint_of(const CaseResult& r) {
  const CheckResult* cp = find_check(r, "checkpoint");
  EXPECT_NE(cp, nullptr) << r.message;
  static const CheckResult none;
  return cp ? *cp : none;
}

TEST(StackCheckpoint, OrderNoiseIsReportedNotFailedWithoutDeterminism) {
  ScheduleDependentWeightGradient noisy(std::ldexp(1.0, -22));  // two f32 ulps
  const CaseResult r = check_case(f32_stack(false), noisy);
  const CheckResult& cp = checkpoint_of(r);
  EXPECT_EQ(cp.disposition, Disposition::kPassed) << cp.message;
  EXPECT_NE(cp.message.find("by no more than sums in another order make"), std::string::npos) << cp.message;
}

TEST(StackCheckpoint, AWrongRecomputationFailsWithoutDeterminism) {
  ScheduleDependentWeightGradient wrong(1e-2);
  const CheckResult& cp = checkpoint_of(check_case(f32_stack(false), wrong));
  EXPECT_EQ(cp.disposition, Disposition::kFailed) << cp.message;
  EXPECT_NE(cp.message.find("beyond the noise of sums in another order: dw of layer"), std::string::npos) << cp.message;
}

TEST(StackCheckpoint, DeterministicCasesRequireBitwiseEquality) {
  ScheduleDependentWeightGradient noisy(std::ldexp(1.0, -22));
  const CheckResult& cp = checkpoint_of(check_case(f32_stack(true), noisy));
  EXPECT_EQ(cp.disposition, Disposition::kFailed) << cp.message;
  EXPECT_NE(cp.message.find("a deterministic backend must recompute the same values"), std::string::npos)
      << cp.message;
}

}  // namespace
}  // namespace kc
