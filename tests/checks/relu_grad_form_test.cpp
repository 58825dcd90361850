// relu' applied as dy times a slope of 0 below 0 (checks/relu_grad_form.h): where an
// infinite dy meets a negative pre-activation the kernel's gradients are NaN, which the
// backward check names; a kernel whose NaN has another cause (a NaN planted in dx) is not
// given that name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;
using ::testing::Not;

constexpr double kInf = std::numeric_limits<double>::infinity();

// relu' of its own z as dz = z > 0 ? dy : dy * 0 (`slope_zero`), or the contract's 0 with
// one NaN planted in dx[0] (`plant_nan`).
class ReluGradForm final : public test::DelegatingBackend {
 public:
  explicit ReluGradForm(bool slope_zero) : DelegatingBackend("relu_grad_form"), slope_zero_(slope_zero) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool, const Tensor& dy,
                       Tensor& dx, Tensor& dw, Tensor* db) override {
    const Tensor z = ref::conv_forward(g, x, w, b);
    Tensor dz = dy;
    for (int64_t i = 0; i < dz.size(); ++i) dz[i] = z[i] > 0.0 ? dz[i] : slope_zero_ ? dz[i] * 0.0 : 0.0;
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, false, dz, dx, dw, db));
    if (!slope_zero_) dx[0] = std::numeric_limits<double>::quiet_NaN();
    return ok_status();
  }

 private:
  bool slope_zero_;
};

// A k1 conv over one channel: z = 2x + 0.5 = [2.5, -1.5, 4.5, -3.5]; dy = [1, inf, 2, 3]
// meets the negative z1 with an infinity, so the contract's dx1 and dw, db stay finite.
Case infinite_dy_case() {
  Case c = fused(conv_case({.batch = 1, .channels = 1, .out_channels = 1, .spatial = {4}, .kernel = {1}}));
  c.dtype = DType::kF32;
  c.tensors["x"] = Tensor{DType::kF32, {1, 1, 4}, {1.0, -1.0, 2.0, -2.0}};
  c.tensors["w"] = Tensor{DType::kF32, {1, 1, 1}, {2.0}};
  c.tensors["b"] = Tensor{DType::kF32, {1}, {0.5}};
  c.tensors["dy"] = Tensor{DType::kF32, {1, 1, 4}, {1.0, kInf, 2.0, 3.0}};
  return c;
}

TEST(ReluGradForm, DyTimesZeroBelowZeroIsNamed) {
  ReluGradForm slope(true);
  const CheckResult r = run_check(infinite_dy_case(), slope, "backward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("where an infinite dy meets a negative pre-activation: relu' applied as dy x 0"));
}

TEST(ReluGradForm, ANaNOfAnotherCauseIsNotGivenThatName) {
  ReluGradForm planted(false);
  const CheckResult r = run_check(infinite_dy_case(), planted, "backward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, Not(HasSubstr("relu' applied as dy x 0")));
}

}  // namespace
}  // namespace kc
