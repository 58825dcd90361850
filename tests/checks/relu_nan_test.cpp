// relu'(NaN) in conv_bias_relu's backward (docs/ops.md, "Activation and fused op"): where the pre-activation
// z is NaN, dz = 0 (the oracle's) and dz = dy (PyTorch's threshold_backward, oneDNN)
// are both accepted and the message names which the backend did; a backend that
// declares one is held to it, and gradients neither convention explains fail, naming
// the NaN pre-activations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

// relu' of its own z: NaN routes dy when `nan_passes`; `scale` multiplies what passes
// there (2: a wrong gradient no convention explains).
class ReluNanConvention final : public test::DelegatingBackend {
 public:
  ReluNanConvention(bool nan_passes, ReluNanGrad declared, double scale = 1.0)
      : DelegatingBackend("relu_nan"), nan_passes_(nan_passes), declared_(declared), scale_(scale) {}
  Numerics numerics() const override {
    Numerics n;
    n.relu_nan_grad = declared_;
    return n;
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool, const Tensor& dy,
                       Tensor& dx, Tensor& dw, Tensor* db) override {
    const Tensor z = ref::conv_forward(g, x, w, b);
    Tensor dz = dy;
    for (int64_t i = 0; i < dz.size(); ++i) {
      dz[i] = z[i] > 0.0 ? dz[i] : std::isnan(z[i]) && nan_passes_ ? scale_ * dz[i] : 0.0;
    }
    return reference().conv_backward(g, x, w, b, false, dz, dx, dw, db);
  }

 private:
  bool nan_passes_;
  ReluNanGrad declared_;
  double scale_;
};

// x[0, 3] = NaN makes z NaN at outputs 1 to 3; z0, z4 and z5 are clear of 0.
// Channel 1 keeps half of dw finite (channel 0's dw is NaN in either convention).
Case nan_preactivation_case() {
  Case c = fused(conv_case({.batch = 1, .channels = 2, .out_channels = 1, .spatial = {8}, .kernel = {3}}));
  c.dtype = DType::kF32;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.tensors["x"] = Tensor{
      DType::kF32, {1, 2, 8}, {1.0, 2.0, -1.0, nan, 0.5, 1.5, -2.0, 1.0, 1.0, -1.0, 0.5, 0.0, 1.0, 0.5, 1.0, -0.5}};
  c.tensors["w"] = Tensor{DType::kF32, {1, 2, 3}, {1.0, 0.5, 1.0, 0.5, 0.25, 1.0}};
  c.tensors["b"] = Tensor{DType::kF32, {1}, {0.125}};
  c.tensors["dy"] = Tensor{DType::kF32, {1, 1, 6}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}};
  return c;
}

TEST(ReluNan, EitherConventionPassesAndIsNamed) {
  ReluNanConvention zero(false, ReluNanGrad::kEither), dy(true, ReluNanGrad::kEither);
  const CheckResult a = run_check(nan_preactivation_case(), zero, "backward");
  EXPECT_EQ(a.disposition, Disposition::kPassed) << describe(a);
  EXPECT_THAT(a.message, HasSubstr("relu'(NaN) = 0 (the oracle's convention"));
  EXPECT_THAT(a.message, HasSubstr("3 NaN pre-activations"));
  const CheckResult b = run_check(nan_preactivation_case(), dy, "backward");
  EXPECT_EQ(b.disposition, Disposition::kPassed) << describe(b);
  EXPECT_THAT(b.message, HasSubstr("relu'(NaN) passes dy (PyTorch's and oneDNN's convention)"));
}

TEST(ReluNan, ADeclaredConventionIsDemanded) {
  ReluNanConvention says_zero_passes_dy(true, ReluNanGrad::kZero), says_dy_gives_zero(false, ReluNanGrad::kPassDy);
  const CheckResult a = run_check(nan_preactivation_case(), says_zero_passes_dy, "backward");
  EXPECT_EQ(a.disposition, Disposition::kFailed) << describe(a);
  EXPECT_THAT(a.message, HasSubstr("relu'(NaN) = 0 (declared) at 3 NaN pre-activations"));
  const CheckResult b = run_check(nan_preactivation_case(), says_dy_gives_zero, "backward");
  EXPECT_EQ(b.disposition, Disposition::kFailed) << describe(b);
  EXPECT_THAT(b.message, HasSubstr("relu'(NaN) passes dy (declared)"));
}

TEST(ReluNan, GradientsNeitherConventionExplainsFailNamingTheNaNs) {
  ReluNanConvention doubled(true, ReluNanGrad::kEither, 2.0);
  const CheckResult r = run_check(nan_preactivation_case(), doubled, "backward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("relu'(NaN) explains nothing: neither 0 nor dy there gives these gradients"));
  EXPECT_THAT(r.message, HasSubstr("3 NaN pre-activations"));
}

}  // namespace
}  // namespace kc
