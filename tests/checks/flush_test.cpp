// Subnormals flushed to zero (FTZ, kc/numerics.h): a backend that declares it may flush
// results below the dtype's smallest normal number; one that does not declare it fails
// with "subnormal flushed to zero"; and a declared FTZ that also flushes normal numbers
// (everything below 2^-90) fails. A flushed max-pool maximum passes argmax and padding.
#include <gtest/gtest.h>

#include <cmath>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

// The reference's y with every magnitude below `below` written as 0.
class Flushing final : public test::DelegatingBackend {
 public:
  Flushing(double below, bool declares) : DelegatingBackend("flushing"), below_(below), declares_(declares) {}
  Numerics numerics() const override {
    Numerics n;
    n.flushes_subnormals = declares_;
    return n;
  }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    for (double& v : y.data) v = std::abs(v) < below_ ? 0.0 : v;
    return ok_status();
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    KC_RETURN_IF_ERROR(reference().maxpool_forward(g, x, y, indices));
    for (double& v : y.data) v = std::abs(v) < below_ ? 0.0 : v;
    return ok_status();
  }

 private:
  double below_;
  bool declares_;
};

// y[0..2] are sums of products of `scale`-sized x and w: 3 2^-130 to 5 2^-130 (subnormal
// in f32) for scale 2^-65, normal for 2^-50; y[3..6] are of the size of `scale` itself,
// clear of any flush.
Case tiny_conv(double scale) {
  Case c = conv_case({.batch = 1, .channels = 1, .out_channels = 1, .spatial = {8}, .kernel = {2}});
  c.dtype = DType::kF32;
  const double s = scale;
  c.tensors["x"] = Tensor{DType::kF32, {1, 1, 8}, {s, 2 * s, 3 * s, s, 1.0, 2.0, 1.0, 3.0}};
  c.tensors["w"] = Tensor{DType::kF32, {1, 1, 2}, {s, s}};
  return c;
}

const double kNormal = std::ldexp(1.0, -126);  // f32's smallest normal number

TEST(Flush, ADeclaredFlushOfSubnormalsPasses) {
  Flushing ftz(kNormal, true);
  const CheckResult r = run_check(tiny_conv(std::ldexp(1.0, -65)), ftz, "forward");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
}

TEST(Flush, AnUndeclaredFlushIsNamed) {
  Flushing ftz(kNormal, false);
  const CheckResult r = run_check(tiny_conv(std::ldexp(1.0, -65)), ftz, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("subnormal flushed to zero: the backend does not declare FTZ"));
}

TEST(Flush, ADeclaredFlushOfNormalNumbersFails) {
  Flushing too_far(std::ldexp(1.0, -90), true);
  const CheckResult r = run_check(tiny_conv(std::ldexp(1.0, -50)), too_far, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
}

// A max pool whose window maximum is subnormal gives 0 under a declared FTZ: argmax and
// padding accept it (its index still points at the maximum), and an undeclared flush fails.
TEST(Flush, ADeclaredFlushOfAPoolMaximumPassesArgmaxAndPadding) {
  Case c = pool_case(1, 1, {6}, {2}, {1}, PadSpec{});
  c.dtype = DType::kF32;
  std::get<MaxPoolParams>(c.op).tie = TieRule::kAny;
  std::get<MaxPoolParams>(c.op).padding = PadSpec{PadKind::kExplicit, {{1, 1}}};
  const double sub = std::ldexp(1.0, -130);
  c.tensors["x"] = Tensor{DType::kF32, {1, 1, 6}, {sub, -1.0, 2.0, 0.5, -sub, 3.0}};
  Flushing ftz(kNormal, true), undeclared(kNormal, false);
  for (const char* check : {"argmax", "padding"}) {
    const CheckResult r = run_check(c, ftz, check);
    EXPECT_EQ(r.disposition, Disposition::kPassed) << check << ": " << describe(r);
  }
  EXPECT_EQ(run_check(c, undeclared, "argmax").disposition, Disposition::kFailed);
}

}  // namespace
}  // namespace kc
