// gradcheck, adjoint and weight_share: the oracle passes its own identities on cases of
// every rank, grouping, stride and padding mode; planted-bug backends are caught with
// the right diagnosis; kinks and trivial cases are never reported as PASSED-by-luck.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "checks/gradcheck.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "kc/runner.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

using ::testing::HasSubstr;
using test::conv_case;
using test::explicit_pad;
using test::pad_kind;

// The named check of one case run on a backend, the case asking for that check only.
CheckResult run_check(Case c, Backend& backend, const std::string& name) {
  c.checks = {name};
  const CaseResult r = check_case(c, backend);
  for (const CheckResult& cr : r.checks) {
    if (cr.name == name) return cr;
  }
  ADD_FAILURE() << name << " did not run: " << disposition_name(r.disposition) << " " << r.message;
  return make_result(name, Disposition::kCrashed, r.message);
}

std::string describe(const CheckResult& r) { return std::string(disposition_name(r.disposition)) + ": " + r.message; }

Case seeded(Case c, uint64_t seed) {
  c.data.seed = seed;
  return c;
}

Case fused(Case c) {
  ConvParams p = std::get<ConvParams>(c.op);
  p.bias = true;
  c.op = ConvBiasReluParams{p};
  return c;
}

Case pool_case(int64_t batch, int64_t channels, Dims spatial, Dims kernel, Dims stride, PadSpec pad) {
  Case c;
  c.dtype = DType::kF64;
  c.input = {batch, channels, spatial};
  MaxPoolParams p;
  p.kernel = kernel;
  p.stride = stride;
  p.padding = pad;
  c.op = p;
  return c;
}

// Conv cases across ranks, groups, strides, dilations, padding kinds and modes.
std::vector<Case> conv_cases() {
  return {
      seeded(conv_case({.batch = 2, .channels = 3, .out_channels = 4, .spatial = {11}, .kernel = {3},
                        .stride = {2}, .padding = explicit_pad({{1, 2}}), .bias = true}), 1),
      seeded(conv_case({.batch = 2, .channels = 4, .out_channels = 6, .groups = 2, .spatial = {7, 6},
                        .kernel = {3, 2}, .dilation = {2, 1}, .padding = pad_kind(PadKind::kSame),
                        .mode = PaddingMode::kReflect, .dtype = DType::kF32}), 2),
      seeded(conv_case({.batch = 1, .channels = 2, .out_channels = 2, .spatial = {4, 5, 3}, .kernel = {2, 3, 2},
                        .padding = pad_kind(PadKind::kSameLower), .mode = PaddingMode::kReplicate}), 3),
      seeded(conv_case({.batch = 2, .channels = 3, .out_channels = 3, .groups = 3, .spatial = {6, 5},
                        .kernel = {3, 3}, .stride = {2, 1}, .padding = explicit_pad({{1, 1}, {2, 0}}),
                        .mode = PaddingMode::kCircular, .bias = true, .dtype = DType::kF16}), 4),
      // x, w and b above 512 elements: the directional path.
      seeded(conv_case({.batch = 2, .channels = 4, .out_channels = 4, .spatial = {10, 10}, .kernel = {3, 3},
                        .padding = pad_kind(PadKind::kSame), .bias = true}), 5),
  };
}

// A backend that rounds the oracle's outputs to the case dtype: a correct low-precision kernel.
class RoundingBackend : public test::DelegatingBackend {
 public:
  RoundingBackend() : DelegatingBackend("rounding") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    const DType d = y.dtype;
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    y.round_to_dtype(d);
    return ok_status();
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    const DType d = dx.dtype;
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    for (Tensor* t : {&dx, &dw, db}) {
      if (t != nullptr) t->round_to_dtype(d);
    }
    return ok_status();
  }
};

// A backend whose backward is the oracle's, then `plant` changes it.
class PlantedBackward : public test::DelegatingBackend {
 public:
  using Plant = std::function<void(const ConvGeometry&, const Tensor& x, const Tensor& w, const Tensor& dy,
                                   Tensor& dx, Tensor& dw, Tensor* db)>;
  explicit PlantedBackward(Plant plant) : DelegatingBackend("planted"), plant_(std::move(plant)) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    plant_(g, x, w, dy, dx, dw, db);
    return ok_status();
  }

 private:
  Plant plant_;
};

// dy with everything but the elements `keep` accepts zeroed (flat index, sample, position).
Tensor keep_only(const ConvGeometry& g, const Tensor& dy, const std::function<bool(int64_t n, int64_t p)>& keep) {
  Tensor m = dy;
  const int64_t P = g.spatial.out_count(), per = g.out_channels * P;
  for (int64_t i = 0; i < m.size(); ++i) {
    if (!keep(i / per, i % P)) m[i] = 0.0;
  }
  return m;
}

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
      seeded(fused(conv_case({.batch = 1, .channels = 2, .out_channels = 3, .spatial = {5, 4}, .kernel = {3, 3},
                              .padding = pad_kind(PadKind::kSame)})), 6),
      seeded(fused(conv_case({.batch = 2, .channels = 3, .out_channels = 4, .spatial = {9, 9}, .kernel = {3, 3},
                              .stride = {2, 2}, .padding = pad_kind(PadKind::kSame)})), 7),
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
  const Case small = seeded(conv_case({.batch = 1, .channels = 2, .out_channels = 2, .spatial = {7, 6},
                                       .kernel = {3, 3}, .stride = {2, 2}, .padding = pad_kind(PadKind::kSame)}), 11);
  const Case large = seeded(conv_case({.batch = 2, .channels = 4, .out_channels = 4, .spatial = {12, 10},
                                       .kernel = {3, 3}, .stride = {2, 2}, .padding = pad_kind(PadKind::kSame),
                                       .bias = true}), 12);
  for (const auto& plant : {PlantedBackward::Plant(dx_ignoring_stride), PlantedBackward::Plant(dx_missing_a_tap)}) {
    PlantedBackward be(plant);
    const CheckResult full = run_check(small, be, "gradcheck");
    EXPECT_EQ(full.disposition, Disposition::kFailed) << describe(full);
    EXPECT_THAT(full.message, HasSubstr("dx: "));
    ASSERT_FALSE(full.worst.empty());
    EXPECT_EQ(full.worst[0].tensor, "dx");
    EXPECT_GT(full.max_error_ratio, 1.0);
    const CheckResult dir = run_check(large, be, "gradcheck");
    EXPECT_EQ(dir.disposition, Disposition::kFailed) << describe(dir);
    EXPECT_THAT(dir.message, HasSubstr("the disagreement is in dx"));
    EXPECT_THAT(dir.message, ::testing::Not(HasSubstr("in dx, ")));  // dw and db are right
  }
}

TEST(GradcheckCheck, AimedDirectionCatchesWhatRandomProjectionsAverageOut) {
  // dx rounded to bf16 in an f32 case: every element a few bounds off, in random signs,
  // so random projections average it out; the aimed direction adds it up.
  PlantedBackward be([](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor& dx, Tensor&,
                        Tensor*) { dx.round_to_dtype(DType::kBF16); });
  const Case c = seeded(conv_case({.batch = 2, .channels = 8, .out_channels = 8, .spatial = {16, 16},
                                   .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame), .bias = true,
                                   .dtype = DType::kF32}), 17);
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
  const CheckResult r = run_check(seeded(pool_case(1, 2, {6, 6}, {2, 2}, {2, 2}, explicit_pad({{0, 0}, {0, 0}})), 13),
                                  be, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("dx: "));
}

// conv_bias_relu where channel 0 has exact-zero pre-activations: x is 0 on [5, 10] and
// b[0] = 0, so the outputs whose windows lie there sit exactly on the relu kink.
Case case_with_relu_kinks() {
  Case c = seeded(fused(conv_case({.batch = 1, .channels = 1, .out_channels = 2, .spatial = {16}, .kernel = {3},
                                   .padding = pad_kind(PadKind::kValid)})), 14);
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Tensor x{DType::kF64, {1, 1, 16}, std::vector<double>(16)};
  for (int64_t i = 0; i < 16; ++i) x[i] = i >= 5 && i <= 10 ? 0.0 : u(rng);
  c.tensors["x"] = x;
  c.tensors["b"] = Tensor{DType::kF64, {2}, {0.0, 0.25}};
  return c;
}

TEST(GradcheckCheck, ReluDerivativeAtZeroIsAKinkNotAFailure) {
  // relu'(0) taken as 1: wrong by the contract (the backward check says so), but every
  // element it affects sits on a kink, where finite differences cannot judge.
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
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("probes non-differentiable"));
  EXPECT_EQ(run_check(c, be, "backward").disposition, Disposition::kFailed);
  auto oracle = make_reference_backend();
  const CheckResult ok = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  EXPECT_THAT(ok.message, HasSubstr("7 of 24 probes non-differentiable"));  // x[5..10] and b[0]
}

TEST(GradcheckCheck, EveryProbeAtATieIsMistrusted) {
  Case c = seeded(pool_case(1, 1, {8}, {2}, {2}, explicit_pad({{0, 0}})), 15);
  c.tensors["x"] = Tensor::filled(DType::kF64, {1, 1, 8}, 0.5);  // every window is a tie
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("8 of 8 probes non-differentiable"));
}

TEST(GradcheckCheck, DirectionalPathWithEightDirections) {
  const Case c = seeded(conv_case({.batch = 1, .channels = 2, .out_channels = 3, .spatial = {6, 5},
                                   .kernel = {3, 3}, .stride = {2, 1}, .padding = pad_kind(PadKind::kSame),
                                   .bias = true}), 16);
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
    Status conv_backward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, const Tensor&,
                         Tensor&, Tensor&, Tensor*) override { return s_; }
    Status s_;
  };
  Broken failing(internal_error("kernel launch failed")), missing(unimplemented("no backward yet"));
  const CheckResult f = run_check(conv_cases()[0], failing, "gradcheck");
  EXPECT_EQ(f.disposition, Disposition::kFailed);
  EXPECT_THAT(f.message, HasSubstr("kernel launch failed"));
  EXPECT_EQ(run_check(conv_cases()[0], missing, "gradcheck").disposition, Disposition::kSkipped);
}

// ---------------------------------------------------------------- adjoint

TEST(AdjointCheck, ReferenceAndLowPrecisionBackendPass) {
  auto oracle = make_reference_backend();
  RoundingBackend rounding;
  for (Case c : conv_cases()) {
    const CheckResult r = run_check(c, *oracle, "adjoint");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("<x,dx(g,w)> = "));
    c.dtype = DType::kF16;
    const CheckResult low = run_check(c, rounding, "adjoint");
    EXPECT_EQ(low.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(low);
  }
}

TEST(AdjointCheck, IntegerFillIsBitwiseAndCatchesOneUnit) {
  Case c = seeded(conv_case({.batch = 2, .channels = 3, .out_channels = 4, .spatial = {6, 7}, .kernel = {3, 3},
                             .padding = pad_kind(PadKind::kSame), .mode = PaddingMode::kReplicate, .bias = true,
                             .dtype = DType::kF16}), 21);
  c.data.fill = Fill::kInteger;
  c.tolerance.kind = ToleranceKind::kExact;
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "adjoint");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("exact"));
  // One dx element off by one unit: invisible to a relative bound, not to exact sums
  // (x is nonzero almost everywhere in the integer fill).
  PlantedBackward be([](const ConvGeometry&, const Tensor& x, const Tensor&, const Tensor&, Tensor& dx, Tensor&,
                        Tensor*) {
    for (int64_t i = 0; i < x.size(); ++i) {
      if (x[i] != 0.0) {
        dx[i] += 1.0;
        return;
      }
    }
  });
  const CheckResult off = run_check(c, be, "adjoint");
  EXPECT_EQ(off.disposition, Disposition::kFailed) << describe(off);
  EXPECT_THAT(off.message, HasSubstr("dx (backward data) is not the adjoint"));
}

TEST(AdjointCheck, CatchesAKernelFlippedTheWrongWay) {
  // Forward correct; backward data correlates with the unflipped kernel (a transposed
  // conv must flip it), so dx is not the adjoint of the forward.
  PlantedBackward be([](const ConvGeometry& g, const Tensor&, const Tensor& w, const Tensor& dy, Tensor& dx, Tensor&,
                        Tensor*) {
    Tensor flipped = w;
    const int64_t taps = g.spatial.kernel_count();
    for (int64_t base = 0; base < w.size(); base += taps) {
      for (int64_t k = 0; k < taps; ++k) flipped[base + k] = w[base + taps - 1 - k];
    }
    dx.data = ref::conv_backward_data(g, dy, flipped).data;
  });
  for (const Case& c : conv_cases()) {
    const CheckResult r = run_check(c, be, "adjoint");
    EXPECT_EQ(r.disposition, Disposition::kFailed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("dx (backward data) is not the adjoint"));
    EXPECT_GT(r.max_error_ratio, 1.0);
  }
  PlantedBackward half_dw([](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw,
                             Tensor*) { for (double& v : dw.data) v *= 0.5; });
  EXPECT_THAT(run_check(conv_cases()[1], half_dw, "adjoint").message,
              HasSubstr("dw (backward weight) is not the adjoint"));
}

TEST(AdjointCheck, AKernelThatWritesZerosIsNeverPassed) {
  class Zeros : public test::DelegatingBackend {
   public:
    Zeros() : DelegatingBackend("zeros") {}
    Status conv_forward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, Tensor& y) override {
      for (double& v : y.data) v = 0.0;
      return ok_status();
    }
    Status conv_backward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, const Tensor&,
                         Tensor& dx, Tensor& dw, Tensor* db) override {
      for (Tensor* t : {&dx, &dw, db}) {
        if (t != nullptr) t->data.assign(t->data.size(), 0.0);
      }
      return ok_status();
    }
  } be;
  const CheckResult r = run_check(conv_cases()[0], be, "adjoint");
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("holds trivially"));
}

TEST(AdjointCheck, NotApplicableToReluAndMaxPool) {
  auto oracle = make_reference_backend();
  const CheckResult relu = run_check(fused(conv_cases()[0]), *oracle, "adjoint");
  EXPECT_EQ(relu.disposition, Disposition::kSkipped);
  EXPECT_THAT(relu.message, HasSubstr("nonlinear"));
  const CheckResult pool = run_check(pool_case(1, 1, {6}, {2}, {2}, explicit_pad({{0, 0}})), *oracle, "adjoint");
  EXPECT_EQ(pool.disposition, Disposition::kSkipped);
  EXPECT_THAT(pool.message, HasSubstr("not linear"));
}

// ---------------------------------------------------------------- weight_share

Case share_case() {
  return seeded(conv_case({.batch = 3, .channels = 2, .out_channels = 3, .spatial = {6, 5}, .kernel = {3, 3},
                           .padding = pad_kind(PadKind::kSame), .bias = true}), 31);
}

TEST(WeightShareCheck, ReferenceAndLowPrecisionBackendPass) {
  std::vector<Case> cases = conv_cases();
  cases.push_back(fused(share_case()));
  Case integer = share_case();
  integer.data.fill = Fill::kInteger;
  integer.tolerance.kind = ToleranceKind::kExact;
  cases.push_back(integer);
  auto oracle = make_reference_backend();
  RoundingBackend rounding;
  for (Case c : cases) {
    const CheckResult r = run_check(c, *oracle, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("tile split"));
    if (c.data.fill != Fill::kInteger) c.dtype = DType::kF16;
    const CheckResult low = run_check(c, rounding, "weight_share");
    EXPECT_EQ(low.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(low);
  }
}

TEST(WeightShareCheck, MeanInsteadOfSum) {
  PlantedBackward be([](const ConvGeometry& g, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw,
                        Tensor* db) {
    const double count = static_cast<double>(g.batch * g.spatial.out_count());
    for (double& v : dw.data) v /= count;
    for (double& v : db->data) v /= count;
  });
  for (const Case& c : {share_case(), fused(share_case())}) {
    const CheckResult r = run_check(c, be, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
    EXPECT_THAT(r.message, HasSubstr("weight_share: mean instead of sum (dw = the oracle's / 90 = N*P)"));
    EXPECT_THAT(r.message, HasSubstr("batch split (sum of 3 batch-1 runs) breaks"));
  }
}

TEST(WeightShareCheck, SinglePositionLastWriteWins) {
  PlantedBackward be([](const ConvGeometry& g, const Tensor& x, const Tensor&, const Tensor& dy, Tensor&, Tensor& dw,
                        Tensor*) {
    const int64_t N = g.batch, P = g.spatial.out_count();
    dw.data = ref::conv_backward_weight(g, x, keep_only(g, dy, [&](int64_t n, int64_t p) {
                return n == N - 1 && p == P - 1;
              })).data;
  });
  const CheckResult r = run_check(share_case(), be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("weight_share: single position (last write wins) (dw = the last output position"));
  EXPECT_THAT(r.message, HasSubstr("batch split (sum of 3 batch-1 runs) breaks"));
}

TEST(WeightShareCheck, PartialSumWithoutTheBatch) {
  PlantedBackward be([](const ConvGeometry& g, const Tensor& x, const Tensor&, const Tensor& dy, Tensor&, Tensor& dw,
                        Tensor*) {
    dw.data = ref::conv_backward_weight(g, x, keep_only(g, dy, [](int64_t n, int64_t) { return n == 0; })).data;
  });
  const CheckResult r = run_check(share_case(), be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("weight_share: partial sum (dw = sample 0 alone"));
  EXPECT_THAT(r.message, HasSubstr("batch split (sum of 3 batch-1 runs) breaks"));
  EXPECT_THAT(r.message, ::testing::Not(HasSubstr("tile split")));  // tiles of a batch-0-only sum still add up
}

TEST(WeightShareCheck, NondeterministicRace) {
  // Each call nudges a random third of dw by one ulp: order-dependent accumulation.
  std::mt19937_64 rng(41);
  PlantedBackward be([&rng](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw,
                            Tensor*) {
    for (double& v : dw.data) {
      if (rng() % 3 == 0) v = std::nextafter(v, rng() % 2 ? INFINITY : -INFINITY);
    }
  });
  Case c = share_case();
  c.deterministic = true;
  const CheckResult r = run_check(c, be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("weight_share: nondeterministic race (a second run gives a different dw"));
  c.deterministic = false;  // within the tolerance and not asked for: reported, not failed
  const CheckResult lax = run_check(c, be, "weight_share");
  EXPECT_EQ(lax.disposition, Disposition::kPassed) << describe(lax);
  EXPECT_THAT(lax.message, HasSubstr("a second run gives a different dw"));
}

TEST(WeightShareCheck, NotApplicableToMaxPoolOrSpecialFills) {
  auto oracle = make_reference_backend();
  const CheckResult pool = run_check(pool_case(1, 1, {6}, {2}, {2}, explicit_pad({{0, 0}})), *oracle, "weight_share");
  EXPECT_EQ(pool.disposition, Disposition::kSkipped);
  EXPECT_THAT(pool.message, HasSubstr("no weights"));
  Case special = share_case();
  special.data.fill = Fill::kSpecial;
  EXPECT_THAT(run_check(special, *oracle, "weight_share").message, HasSubstr("special"));
}

}  // namespace
}  // namespace kc
