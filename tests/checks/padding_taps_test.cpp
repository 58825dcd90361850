// Zero-padding taps skipped (kc/numerics.h: skips_padding_taps): with an infinite
// weight, the contract forms inf * 0 = NaN at padding taps; a kernel that never
// multiplies them gives finite values there. Declared, it passes with the difference
// named; undeclared, it fails naming "NaN*0 at a zero-padding tap not formed"; and a
// declared skip that also skips a real tap fails.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

// 1-D, stride 1, kernel 3, padding [1, 1]: y[o] = sum over k of w[k] x[o + k - 1] for the
// taps inside x only; `drop_real` also leaves out tap 1 (a real one) at the outputs
// that touch the padding.
class SkipsPaddingTaps final : public test::DelegatingBackend {
 public:
  SkipsPaddingTaps(bool declares, bool drop_real)
      : DelegatingBackend("skips_padding"), declares_(declares), drop_real_(drop_real) {}
  Numerics numerics() const override {
    Numerics n;
    n.skips_padding_taps = declares_;
    return n;
  }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor*, bool,
                      Tensor& y) override {
    const int64_t in = g.spatial.dims[0].in;
    for (int64_t o = 0; o < in; ++o) {
      const bool edge = o == 0 || o == in - 1;
      double s = 0.0;
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t i = o + k - 1;
        if (i < 0 || i >= in || (drop_real_ && edge && k == 1)) continue;
        s += w[k] * x[i];
      }
      y[o] = s;
    }
    return ok_status();
  }

 private:
  bool declares_, drop_real_;
};

Case inf_weight_case() {
  Case c = conv_case(
      {.batch = 1, .channels = 1, .out_channels = 1, .spatial = {6}, .kernel = {3}, .padding = explicit_pad({{1, 1}})});
  c.dtype = DType::kF32;
  const double inf = std::numeric_limits<double>::infinity();
  c.tensors["x"] = Tensor{DType::kF32, {1, 1, 6}, {1.0, 0.0, -2.0, 0.0, 0.5, 0.0}};
  c.tensors["w"] = Tensor{DType::kF32, {1, 1, 3}, {inf, 1.0, 0.25}};
  return c;
}

TEST(PaddingTaps, DeclaredSkipPassesAndIsNamed) {
  SkipsPaddingTaps skips(true, false);
  const CheckResult r = run_check(inf_weight_case(), skips, "forward");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("NaN*0 at a zero-padding tap not formed"));
  EXPECT_THAT(r.message, HasSubstr("as the backend declares"));
}

TEST(PaddingTaps, UndeclaredSkipFailsNamed) {
  SkipsPaddingTaps skips(false, false);
  const CheckResult r = run_check(inf_weight_case(), skips, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("the backend skips padding taps without declaring it"));
}

TEST(PaddingTaps, ASkipThatAlsoDropsARealTapFails) {
  SkipsPaddingTaps too_many(true, true);
  const CheckResult r = run_check(inf_weight_case(), too_many, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, ::testing::Not(HasSubstr("as the backend declares")));
}

}  // namespace
}  // namespace kc
