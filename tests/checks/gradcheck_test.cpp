// The gradcheck check (docs/checks.md, "Notes on individual checks"): the oracle and a backend rounding to its dtype
// pass on conv, relu and max pool; planted dx and routing bugs are caught on the full and
// the directional paths; kinks are reported, not failed (tied maxima: gradcheck_ties_test.cpp; relu at 0:
// relu_ambiguity_test.cpp).
#include <gtest/gtest.h>

#include "judge/absolute_pass.h"
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
  EXPECT_THAT(r.message, HasSubstr("dy read in the wrong layout or position"));  // both kinds of entry seen
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

// dx summed over output channel 0 only (a reduction over out channels that stops after
// the first): the case's dy is 0 on the others, so its gradients agree; the rows of
// those outputs are 0 in the backward where y depends on x. Named as terms left out,
// never as dy read in the wrong layout.
void dx_from_first_out_channel(const ConvGeometry& g, const Tensor&, const Tensor& w, const Tensor& dy, Tensor& dx,
                               Tensor&, Tensor*) {
  Tensor first = dy;
  const int64_t P = g.spatial.out_count(), C = dy.shape[1];
  for (int64_t n = 0; n < dy.shape[0]; ++n) {
    for (int64_t i = P; i < C * P; ++i) first[n * C * P + i] = 0.0;
  }
  dx.data = ref::conv_backward_data(g, first, w).data;
}

TEST(GradcheckCheck, RowsNameTermsLeftOutWhereTheCasesDyIsZero) {
  Case c = seeded(conv_case({.batch = 1, .channels = 2, .out_channels = 3, .spatial = {5}, .kernel = {3}}), 21);
  Tensor dy = Tensor::filled(DType::kF64, {1, 3, 3}, 0.0);
  for (int64_t i = 0; i < 3; ++i) dy[i] = 0.25 * static_cast<double>(i + 1);  // channel 0 only
  c.tensors["dy"] = dy;
  PlantedBackward be(dx_from_first_out_channel);
  const CheckResult r = run_check(c, be, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("the gradients for the case's dy agree, the Jacobian's rows do not"));
  EXPECT_THAT(r.message, HasSubstr("the backward leaves out terms the forward has"));
  EXPECT_THAT(r.message, ::testing::Not(HasSubstr("wrong layout")));
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
