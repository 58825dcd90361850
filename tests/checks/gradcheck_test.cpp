// The gradcheck check (DESIGN section 4): the oracle and a backend rounding to its dtype
// pass on conv, relu and max pool; planted dx and routing bugs are caught on the full and
// the directional paths; kinks are reported, not failed (tied maxima: checks_gradcheck_ties_test.cpp).
#include <gtest/gtest.h>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

// ---------------------------------------------------------------- gradcheck

TEST(GradcheckCheck, ReferencePassesOnEveryConvShape) {
  auto oracle = make_reference_backend();
  for (const Case& c : conv_cases()) {
    const CheckResult r = run_check(c, *oracle, "gradcheck");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_LE(r.max_error_ratio, 1.0);
  }
}

TEST(GradcheckCheck, ReferencePassesOnReluAndMaxPool) {
  auto oracle = make_reference_backend();
  const std::vector<Case> cases = {
      seeded(fused(conv_case({.batch = 1,
                              .channels = 2,
                              .out_channels = 3,
                              .spatial = {5, 4},
                              .kernel = {3, 3},
                              .padding = pad_kind(PadKind::kSame)})),
             6),
      seeded(fused(conv_case({.batch = 2,
                              .channels = 3,
                              .out_channels = 4,
                              .spatial = {9, 9},
                              .kernel = {3, 3},
                              .stride = {2, 2},
                              .padding = pad_kind(PadKind::kSame)})),
             7),
      seeded(pool_case(1, 2, {6, 7}, {3, 3}, {2, 2}, explicit_pad({{1, 1}, {1, 1}})), 8),
      seeded(pool_case(2, 3, {12, 12}, {3, 3}, {1, 1}, explicit_pad({{1, 1}, {0, 0}})), 9),  // directional
  };
  for (const Case& c : cases) {
    const CheckResult r = run_check(c, *oracle, "gradcheck");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
  }
}

TEST(GradcheckCheck, LowPrecisionBackendPassesWithinTheModel) {
  RoundingBackend be;
  for (Case c : conv_cases()) {
    c.dtype = DType::kF16;
    const CheckResult r = run_check(c, be, "gradcheck");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
  }
}

// dx computed as if the stride were 1 (same output extent): the scatter lands wrongly.
void dx_ignoring_stride(const ConvGeometry& g, const Tensor&, const Tensor& w, const Tensor& dy, Tensor& dx, Tensor&,
                        Tensor*) {
  ConvGeometry unit = g;
  for (DimGeometry& d : unit.spatial.dims) d.stride = 1;
  dx.data = ref::conv_backward_data(unit, dy, w).data;
}

// dx from a kernel whose last tap is missing.
void dx_missing_a_tap(const ConvGeometry& g, const Tensor&, const Tensor& w, const Tensor& dy, Tensor& dx, Tensor&,
                      Tensor*) {
  Tensor cut = w;
  const int64_t taps = g.spatial.kernel_count();
  for (int64_t i = taps - 1; i < cut.size(); i += taps) cut[i] = 0.0;
  dx.data = ref::conv_backward_data(g, dy, cut).data;
}

TEST(GradcheckCheck, CatchesDxBugsOnBothPaths) {
  const Case small = seeded(conv_case({.batch = 1,
                                       .channels = 2,
                                       .out_channels = 2,
                                       .spatial = {7, 6},
                                       .kernel = {3, 3},
                                       .stride = {2, 2},
                                       .padding = pad_kind(PadKind::kSame)}),
                            11);
  const Case large = seeded(conv_case({.batch = 2,
                                       .channels = 4,
                                       .out_channels = 4,
                                       .spatial = {12, 10},
                                       .kernel = {3, 3},
                                       .stride = {2, 2},
                                       .padding = pad_kind(PadKind::kSame),
                                       .bias = true}),
                            12);
  for (const auto& plant : {PlantedBackward::Plant(dx_ignoring_stride), PlantedBackward::Plant(dx_missing_a_tap)}) {
    PlantedBackward be(plant);
    const CheckResult full = run_check(small, be, "gradcheck");
    EXPECT_EQ(full.disposition, Disposition::kFailed) << describe(full);
    EXPECT_THAT(full.message, HasSubstr("dx: "));  // for the case's dy
    EXPECT_THAT(full.message, HasSubstr("J(y,x), the backward of one output's unit dy"));
    EXPECT_THAT(full.message, ::testing::Not(HasSubstr("J(y,w)")));
    ASSERT_FALSE(full.worst.empty());
    EXPECT_THAT(full.worst[0].tensor, ::testing::AnyOf("dx", "J(y,x)"));
    EXPECT_GT(full.max_error_ratio, 1.0);
    const CheckResult dir = run_check(large, be, "gradcheck");
    EXPECT_EQ(dir.disposition, Disposition::kFailed) << describe(dir);
    EXPECT_THAT(dir.message, HasSubstr("the disagreement is in dx"));
    EXPECT_THAT(dir.message, ::testing::Not(HasSubstr("in dx, ")));  // dw and db are right
  }
}

// dx from dy read as if it were [N, out..., Cout] (channels last): the same values in
// the wrong places, invisible under a constant dy.
void dx_reading_dy_channels_last(const ConvGeometry& g, const Tensor&, const Tensor& w, const Tensor& dy, Tensor& dx,
                                 Tensor&, Tensor*) {
  Tensor moved = dy;
  const int64_t C = dy.shape[1], P = g.spatial.out_count();
  for (int64_t n = 0; n < dy.shape[0]; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t q = 0; q < P; ++q) moved[(n * C + c) * P + q] = dy[(n * P + q) * C + c];
    }
  }
  dx.data = ref::conv_backward_data(g, moved, w).data;
}

TEST(GradcheckCheck, FullJacobianCatchesWhatTheCasesDyHides) {
  // dy = 1 everywhere (the loss sum(y)): reading it in the wrong layout changes nothing
  // for this dy, so backward, adjoint and dy^T J all pass; row j of J, from the unit dy
  // of output j alone, does not.
  Case c = seeded(conv_case({.batch = 1,
                             .channels = 2,
                             .out_channels = 3,
                             .spatial = {4, 4},
                             .kernel = {3, 3},
                             .padding = pad_kind(PadKind::kSame)}),
                  18);
  c.tensors["dy"] = Tensor::filled(DType::kF64, {1, 3, 4, 4}, 1.0);
  PlantedBackward be(dx_reading_dy_channels_last);
  const CheckResult r = run_check(c, be, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("as the full Jacobian (48 rows)"));
  EXPECT_THAT(r.message, HasSubstr("J(y,x), the backward of one output's unit dy at a time"));
  EXPECT_THAT(r.message, HasSubstr("the gradients for the case's dy agree, the Jacobian's rows do not"));
  ASSERT_FALSE(r.worst.empty());
  EXPECT_EQ(r.worst[0].tensor, "J(y,x)");
  EXPECT_EQ(r.worst[0].index.size(), 8u);  // the output's coordinates, then x's

  for (const char* hidden : {"backward", "adjoint"}) {
    EXPECT_EQ(run_check(c, be, hidden).disposition, Disposition::kPassed) << hidden;
  }
  const OpGeometry geo = *op_geometry(c);
  const OpInputs in = *make_inputs(c);
  auto oracle = make_reference_backend();
  const OpOutputs ref = invoke(*oracle, c, geo, in);
  const OpOutputs abs = absolute_pass(c, geo, in, ref);
  const OpOutputs bad = invoke(be, c, geo, in);
  const CheckResult dy_only = checks::gradcheck_with({c, geo, in, be, false, ref, abs, bad}, {.row_limit = 0});
  EXPECT_EQ(dy_only.disposition, Disposition::kPassed) << describe(dy_only);
  EXPECT_THAT(dy_only.message, HasSubstr("too many for the full Jacobian"));
  const CheckResult oracle_rows = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(oracle_rows.disposition, Disposition::kPassed) << describe(oracle_rows);
}

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

TEST(GradcheckCheck, AimedDirectionCatchesWhatRandomProjectionsAverageOut) {
  // dx rounded to bf16 in an f32 case: every element a few bounds off, in random signs,
  // so random projections average it out; the aimed direction adds it up.
  PlantedBackward be([](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor& dx, Tensor&,
                        Tensor*) { dx.round_to_dtype(DType::kBF16); });
  const Case c = seeded(conv_case({.batch = 2,
                                   .channels = 8,
                                   .out_channels = 8,
                                   .spatial = {16, 16},
                                   .kernel = {3, 3},
                                   .padding = pad_kind(PadKind::kSame),
                                   .bias = true,
                                   .dtype = DType::kF32}),
                        17);
  const CheckResult r = run_check(c, be, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("1 aimed at the backend's departure"));
  ASSERT_EQ(r.worst.size(), 1u) << describe(r);
  EXPECT_EQ(r.worst[0].index, std::vector<int64_t>{4});  // after the 4 random ones
}

TEST(GradcheckCheck, CatchesMaxPoolGradientRoutedToTheWrongElement) {
  class WrongRoute : public test::DelegatingBackend {
   public:
    WrongRoute() : DelegatingBackend("wrong-route") {}
    Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* idx, Tensor& dx) override {
      IndexTensor shifted = *idx;
      for (int64_t& i : shifted.data) i = (i + 1) % g.spatial.in_count();
      KC_ASSIGN_OR_RETURN(Tensor r, ref::maxpool_backward(g, dy, shifted));
      dx.data = r.data;
      return ok_status();
    }
  } be;
  const CheckResult r =
      run_check(seeded(pool_case(1, 2, {6, 6}, {2, 2}, {2, 2}, explicit_pad({{0, 0}, {0, 0}})), 13), be, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("dx: "));
}

// A global max pool routes one tap of 16 per window: its dx is mostly zero by
// construction, which is what a right backward gives, not data that cannot judge it.
TEST(GradcheckCheck, AGlobalMaxPoolsSparseDxIsJudgedNotMistrusted) {
  const Case c = seeded(pool_case(2, 3, {16}, {16}, {16}, explicit_pad({{0, 0}})), 5);
  test::DelegatingBackend right("right");
  for (const char* check : {"gradcheck", "backward"}) {
    const CheckResult r = run_check(c, right, check);
    EXPECT_EQ(r.disposition, Disposition::kPassed) << check << ": " << describe(r);
  }
}

// conv_bias_relu where channel 0 has exact-zero pre-activations: x is 0 on [5, 10] and
// b[0] = 0, so the outputs whose windows lie there sit exactly on the relu kink.
Case case_with_relu_kinks() {
  Case c = seeded(fused(conv_case({.batch = 1,
                                   .channels = 1,
                                   .out_channels = 2,
                                   .spatial = {16},
                                   .kernel = {3},
                                   .padding = pad_kind(PadKind::kValid)})),
                  14);
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Tensor x = Tensor::zeros(DType::kF64, {1, 1, 16});
  for (int64_t i = 0; i < 16; ++i) x[i] = i >= 5 && i <= 10 ? 0.0 : u(rng);
  c.tensors["x"] = x;
  c.tensors["b"] = Tensor{DType::kF64, {2}, {0.0, 0.25}};
  return c;
}

TEST(GradcheckCheck, ReluDerivativeAtZeroIsJudgedWhereTheSumsAreExact) {
  // relu'(0) taken as 1: wrong by the contract. The 4 outputs at the kink (z exactly 0,
  // from exact sums of zeros) are left out of the differenced loss, as no step could
  // difference them; a right backward gives them nothing, so the dy this one passes
  // there shows in dx and db. Before, every probe touching them was non-differentiable
  // (7 of 24) and this backend passed gradcheck.
  PlantedBackward be([](const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& dx,
                        Tensor& dw, Tensor* db) {
    const Tensor z = ref::conv_forward(g, x, w, nullptr);  // b[0] = 0: channel 0 is all we need
    Tensor dz = dy;
    const int64_t P = g.spatial.out_count();
    for (int64_t i = 0; i < dz.size(); ++i) {
      const double pre = z[i] + (i / P % 2 == 0 ? 0.0 : 0.25);
      dz[i] = pre >= 0.0 ? dy[i] : 0.0;
    }
    const ref::ConvGrads r = ref::conv_backward(g, x, w, dz);
    dx.data = r.dx.data;
    dw.data = r.dw.data;
    db->data = ref::conv_backward_bias(g, dz).data;
  });
  const Case c = case_with_relu_kinks();
  const CheckResult r = run_check(c, be, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("4 outputs at the relu's kink (z = 0) left out of the differenced loss"));
  EXPECT_THAT(r.message, HasSubstr("dx: 6 of 16 elements disagree; db: 1 of 2 elements disagree"));
  EXPECT_EQ(run_check(c, be, "backward").disposition, Disposition::kFailed);
  auto oracle = make_reference_backend();
  const CheckResult ok = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  EXPECT_THAT(ok.message, Not(HasSubstr("non-differentiable")));  // every probe differenced
}

TEST(GradcheckCheck, DirectionalPathWithEightDirections) {
  const Case c = seeded(conv_case({.batch = 1,
                                   .channels = 2,
                                   .out_channels = 3,
                                   .spatial = {6, 5},
                                   .kernel = {3, 3},
                                   .stride = {2, 1},
                                   .padding = pad_kind(PadKind::kSame),
                                   .bias = true}),
                        16);
  const OpGeometry geo = *op_geometry(c);
  const OpInputs in = *make_inputs(c);
  auto oracle = make_reference_backend();
  const OpOutputs ref = invoke(*oracle, c, geo, in);
  const OpOutputs abs = absolute_pass(c, geo, in, ref);
  const checks::GradcheckOptions eight{.full_limit = 0, .directions = 8};
  const CheckResult ok = checks::gradcheck_with({c, geo, in, *oracle, true, ref, abs, ref}, eight);
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  EXPECT_THAT(ok.message, HasSubstr("8 random directions"));
  PlantedBackward be([](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw,
                        Tensor*) { dw[0] += 0.5; });
  const OpOutputs bad = invoke(be, c, geo, in);
  const CheckResult caught = checks::gradcheck_with({c, geo, in, be, false, ref, abs, bad}, eight);
  EXPECT_EQ(caught.disposition, Disposition::kFailed) << describe(caught);
  EXPECT_THAT(caught.message, HasSubstr("the disagreement is in dw"));
}

TEST(GradcheckCheck, NotApplicableOrSkippedWithTheReason) {
  auto oracle = make_reference_backend();
  Case special = conv_cases()[0];
  special.data.fill = Fill::kSpecial;
  const CheckResult s = run_check(special, *oracle, "gradcheck");
  EXPECT_EQ(s.disposition, Disposition::kSkipped);
  EXPECT_THAT(s.message, HasSubstr("special"));
  Case inference = pool_case(1, 1, {6}, {2}, {2}, explicit_pad({{0, 0}}));
  std::get<MaxPoolParams>(inference.op).mode = PoolMode::kInference;
  EXPECT_THAT(run_check(inference, *oracle, "gradcheck").message, HasSubstr("inference mode"));
  class Broken : public test::DelegatingBackend {
   public:
    explicit Broken(Status s) : DelegatingBackend("broken"), s_(std::move(s)) {}
    Status conv_backward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, const Tensor&, Tensor&,
                         Tensor&, Tensor*) override {
      return s_;
    }
    Status s_;
  };
  Broken failing(internal_error("kernel launch failed")), missing(unimplemented("no backward yet"));
  const CheckResult f = run_check(conv_cases()[0], failing, "gradcheck");
  EXPECT_EQ(f.disposition, Disposition::kFailed);
  EXPECT_THAT(f.message, HasSubstr("kernel launch failed"));
  EXPECT_EQ(run_check(conv_cases()[0], missing, "gradcheck").disposition, Disposition::kSkipped);
}

}  // namespace
}  // namespace kc
