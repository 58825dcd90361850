// gradcheck where relu's derivative is ambiguous (relu_ambiguity.cpp): a pre-activation
// within rounding of 0 may take either side, and ambiguity that swamps the gradients
// leaves the check MISTRUSTED, never PASSED.
#include <gtest/gtest.h>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

TEST(GradcheckCheck, PreActivationRoundingToZeroMayTakeEitherSideOfTheRelu) {
  // A correct f16 conv_bias_relu: y is stored in f16 and the backward masks with the
  // stored y. z[0] = 2^-26 in f64 rounds to 0 in f16, so this kernel masks output 0
  // where the f64 differences do not; the backward check allows either side, and so
  // must gradcheck: for the case's dy, and by leaving out row 0 of the Jacobian. Sample
  // 1 (x 2, 1, 0, -1: z = 2 + 2^-13, 2) is clear of 0, so no gradient is swamped.
  class MaskFromStoredY : public RoundingBackend {  // its forward stores y in the dtype
   public:
    Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool,
                         const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
      Tensor y = ref::conv_forward(g, x, w, b);
      y.round_to_dtype(dx.dtype);
      Tensor dz = dy;
      for (int64_t i = 0; i < dz.size(); ++i) dz[i] = y[i] > 0.0 ? dz[i] : 0.0;
      return reference().conv_backward(g, x, w, b, false, dz, dx, dw, db);
    }
  } be;
  Case c = fused(conv_case({.batch = 2, .channels = 1, .out_channels = 1, .spatial = {4}, .kernel = {3}}));
  c.dtype = DType::kF16;
  const double e = std::ldexp(1.0, -13);
  c.tensors["x"] = Tensor{DType::kF16, {2, 1, 4}, {1.0, e, 1.0, -0.5, 2.0, 1.0, 0.0, -1.0}};
  c.tensors["w"] = Tensor{DType::kF16, {1, 1, 3}, {1.0, e, -1.0}};
  c.tensors["b"] = Tensor{DType::kF16, {1}, {0.0}};
  for (const std::vector<double>& dy :
       {std::vector<double>{0.0, 1.0, 1.0, 1.0}, std::vector<double>{1.0, 1.0, 1.0, 1.0}}) {
    c.tensors["dy"] = Tensor{DType::kF16, {2, 1, 2}, {dy.begin(), dy.end()}};
    const CheckResult b = run_check(c, be, "backward");
    EXPECT_EQ(b.disposition, Disposition::kPassed) << describe(b);
    const CheckResult r = run_check(c, be, "gradcheck");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
    EXPECT_THAT(r.message, HasSubstr("as the full Jacobian (3 rows)"));
    EXPECT_THAT(r.message, HasSubstr("1 pre-activations within rounding of 0 may take either side of relu'"));
  }
}

TEST(GradcheckCheck, AZeroFromInexactF64SumsMayTakeEitherSideOfTheRelu) {
  // bf16 fused conv: z[0] = -0.064453125 * 2^-131 - 0.408203125 * 0.5 + 0.0751953125 *
  // 1.5 * 2^-131 + 0.2041015625 is 0.0483 * 2^-131 > 0 exactly, but 0 in f64, whose
  // additions absorb the subnormal products beside 0.2. A kernel that keeps them (f32
  // sums in another order) rightly passes dy[0] through the relu: backward must allow it,
  // as it allows the oracle's mask. z[1] > 0 and z[2] < 0 are clear, and so is sample 1
  // (x -1, -2, -1, -2, -1: z = 1.01, 0.59, 1.01), so no gradient is swamped.
  class MaskFromSign : public test::DelegatingBackend {
   public:
    explicit MaskFromSign(bool zero_passes) : DelegatingBackend("mask-from-sign"), zero_passes_(zero_passes) {}
    Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool,
                         const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
      const Tensor z = ref::conv_forward(g, x, w, b);
      Tensor dz = dy;
      for (int64_t i = 0; i < dz.size(); ++i) dz[i] = z[i] > 0.0 || (zero_passes_ && z[i] == 0.0) ? dz[i] : 0.0;
      return reference().conv_backward(g, x, w, b, false, dz, dx, dw, db);
    }

   private:
    bool zero_passes_;
  };
  Case c = fused(conv_case({.batch = 2, .channels = 1, .out_channels = 1, .spatial = {5}, .kernel = {3}}));
  c.dtype = DType::kBF16;
  const double t = std::ldexp(1.0, -131);
  c.tensors["x"] = Tensor{DType::kBF16, {2, 1, 5}, {t, 0.5, 1.5 * t, 1.0, 1.0, -1.0, -2.0, -1.0, -2.0, -1.0}};
  c.tensors["w"] = Tensor{DType::kBF16, {1, 1, 3}, {-0.064453125, -0.408203125, 0.0751953125}};
  c.tensors["b"] = Tensor{DType::kBF16, {1}, {0.2041015625}};
  c.tensors["dy"] = Tensor{DType::kBF16, {2, 1, 3}, {1.0, -0.5, 0.75, 1.0, 1.0, 1.0}};
  for (bool zero_passes : {false, true}) {
    MaskFromSign be(zero_passes);
    const CheckResult r = run_check(c, be, "backward");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << zero_passes << ": " << describe(r);
  }
  // Integer data sums exactly in every dtype: z[2] = -1 + 1 is 0 for every kernel, and
  // relu'(0) = 1 there is the bug it is, under the bound tolerance too.
  for (DType d : {DType::kF64, DType::kF32, DType::kBF16}) {
    Case e = fused(conv_case({.batch = 1, .channels = 1, .out_channels = 1, .spatial = {4}, .kernel = {1}}));
    e.dtype = d;
    e.tensors["x"] = Tensor{d, {1, 1, 4}, {1.0, 2.0, -1.0, 3.0}};
    e.tensors["w"] = Tensor{d, {1, 1, 1}, {1.0}};
    e.tensors["b"] = Tensor{d, {1}, {1.0}};
    e.tensors["dy"] = Tensor{d, {1, 1, 4}, {1.0, -2.0, 3.0, 2.0}};
    MaskFromSign wrong(true), right(false);
    EXPECT_EQ(run_check(e, wrong, "backward").disposition, Disposition::kFailed) << dtype_name(d);
    const CheckResult ok = run_check(e, right, "backward");
    EXPECT_EQ(ok.disposition, Disposition::kPassed) << dtype_name(d) << ": " << describe(ok);
  }
  // Exactness is judged per output: a tiny x in another window (x[4]), another sample
  // and another filter (1x1 conv, two out channels) leaves z[n=0, c=0, 2] = -1 + 1 an
  // exact 0 in every kernel, so relu'(0) = 1 there is still caught; z at x[4] itself is a
  // product that is exact too.
  for (DType d : {DType::kF32, DType::kBF16}) {
    Case e = fused(conv_case({.batch = 2, .channels = 1, .out_channels = 2, .spatial = {5}, .kernel = {1}}));
    e.dtype = d;
    const double tiny = std::ldexp(1.0, -100);
    e.tensors["x"] = Tensor{d, {2, 1, 5}, {1.0, 2.0, -1.0, 3.0, tiny, 1.0, tiny, 2.0, 1.0, 1.0}};
    e.tensors["w"] = Tensor{d, {2, 1, 1}, {1.0, 0.375 * std::ldexp(1.0, -90)}};
    e.tensors["b"] = Tensor{d, {2}, {1.0, 0.5}};
    e.tensors["dy"] = Tensor{d, {2, 2, 5}, {1.0, -2.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                            1.0, 1.0,  1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}};
    MaskFromSign wrong(true), right(false);
    const CheckResult bad = run_check(e, wrong, "backward");
    EXPECT_EQ(bad.disposition, Disposition::kFailed) << dtype_name(d) << ": " << describe(bad);
    const CheckResult ok = run_check(e, right, "backward");
    EXPECT_EQ(ok.disposition, Disposition::kPassed) << dtype_name(d) << ": " << describe(ok);
  }
  // Terms below the accumulation's smallest normal number are not exact, however few
  // their bits: in f32, 2^-149 * (-0.5) and * (-0.25) round to -0 and 2^-149 * 0.75 to
  // 2^-149, so a right f32 kernel gets z[0] = 2^-149 > 0 where the f64 sum is exactly 0,
  // and passes dy[0] through the relu. 1-D single channel, valid k3: z[j] = sum_k w[k] x[j+k].
  // Sample 1 (z = 1.5, 1, 0.75) keeps every gradient clear of the ambiguity.
  {
    class F32Products : public test::DelegatingBackend {
     public:
      F32Products() : DelegatingBackend("f32-products") {}
      Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool,
                           const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
        Tensor dz = dy;
        const int64_t out = g.spatial.out_count(), in = out + w.size() - 1;
        for (int64_t j = 0; j < dz.size(); ++j) {
          float z = static_cast<float>((*b)[0]);
          for (int64_t k = 0; k < w.size(); ++k) {
            z += static_cast<float>(w[k]) * static_cast<float>(x[j / out * in + j % out + k]);
          }
          if (!(z > 0.0f)) dz[j] = 0.0;
        }
        return reference().conv_backward(g, x, w, b, false, dz, dx, dw, db);
      }
    } right;
    Case e = fused(conv_case({.batch = 2, .channels = 1, .out_channels = 1, .spatial = {5}, .kernel = {3}}));
    e.dtype = DType::kF32;
    const double s = std::ldexp(1.0, -149);
    e.tensors["x"] = Tensor{DType::kF32, {2, 1, 5}, {s, s, s, 1.0, 0.5, -1.0, -1.0, 1.0, 1.0, 2.0}};
    e.tensors["w"] = Tensor{DType::kF32, {1, 1, 3}, {-0.5, -0.25, 0.75}};
    e.tensors["b"] = Tensor{DType::kF32, {1}, {0.0}};
    e.tensors["dy"] = Tensor{DType::kF32, {2, 1, 3}, {1.0, 0.5, -0.75, 1.0, 1.0, 1.0}};
    const CheckResult ok = run_check(e, right, "backward");
    EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  }
  // Reflect padding takes pad values from the whole plane, so exactness is judged over
  // the sample's group: a tiny x in group 1 leaves group 0's z[2] = -1 + 1 exact.
  {
    Case e = fused(conv_case({.batch = 1,
                              .channels = 2,
                              .out_channels = 2,
                              .groups = 2,
                              .spatial = {4},
                              .kernel = {3},
                              .padding = pad_kind(PadKind::kSame),
                              .mode = PaddingMode::kReflect}));
    e.dtype = DType::kBF16;
    const double tiny = std::ldexp(1.0, -100);
    e.tensors["x"] = Tensor{DType::kBF16, {1, 2, 4}, {1.0, 2.0, -1.0, 3.0, tiny, 1.0, 1.0, 1.0}};
    e.tensors["w"] = Tensor{DType::kBF16, {2, 1, 3}, {0.0, 1.0, 0.0, 1.0, 1.0, 1.0}};
    e.tensors["b"] = Tensor{DType::kBF16, {2}, {1.0, 0.5}};
    e.tensors["dy"] = Tensor{DType::kBF16, {1, 2, 4}, {1.0, -2.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0}};
    MaskFromSign wrong(true), right(false);
    const CheckResult bad = run_check(e, wrong, "backward");
    EXPECT_EQ(bad.disposition, Disposition::kFailed) << describe(bad);
    const CheckResult ok = run_check(e, right, "backward");
    EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  }
}

TEST(GradcheckCheck, AmbiguityThatSwampsTheGradientsIsMistrustedNotPassed) {
  // A bf16 fused conv with bf16 sums of 28 terms: the bound covers most pre-activations,
  // so either side of relu' is right nearly everywhere and a backward without any relu
  // mask cannot be told from a right one: MISTRUSTED (backward too), never PASSED. With
  // 4-term sums (pointwise) the same bug is FAILED.
  PlantedBackward no_mask([](const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& dx,
                             Tensor& dw, Tensor* db) {
    const ref::ConvGrads r = ref::conv_backward(g, x, w, dy);  // relu' taken as 1 everywhere
    dx.data = r.dx.data;
    dw.data = r.dw.data;
    db->data = ref::conv_backward_bias(g, dy).data;
  });
  for (const int64_t k : {3, 1}) {
    Case c = seeded(fused(conv_case({.batch = 2,
                                     .channels = 3,
                                     .out_channels = 4,
                                     .spatial = {8, 8},
                                     .kernel = {k, k},
                                     .padding = pad_kind(PadKind::kSame),
                                     .dtype = DType::kBF16})),
                    4301);
    c.accumulation = DType::kBF16;
    const Disposition want = k == 3 ? Disposition::kMistrusted : Disposition::kFailed;
    for (const char* check : {"backward", "gradcheck"}) {
      const CheckResult r = run_check(c, no_mask, check);
      EXPECT_EQ(r.disposition, want) << "k " << k << " " << check << ": " << describe(r);
      if (k == 3) {
        EXPECT_THAT(r.message, HasSubstr("cannot judge the relu mask at this precision"));
      }
    }
  }
}

}  // namespace
}  // namespace kc
