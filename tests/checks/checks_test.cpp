// The tolerance model (its element-wise comparisons: tolerance_compare_test.cpp), the
// shape/forward/backward checks with planted bugs they must catch (golden:
// checks_golden_test.cpp), the runner's
// expect rules, worker isolation and the exit-code rules.
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
#include "kc/report.h"
#include "kc/runner.h"
#include "run/isolate.h"
#include "run/tolerance.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"
#include "support/f32_direct.h"

namespace kc {
namespace {

Case small_conv(bool bias = true) {
  test::ConvSpec s{.batch = 2,
                   .channels = 3,
                   .out_channels = 4,
                   .spatial = {7, 6},
                   .kernel = {3, 3},
                   .stride = {2, 1},
                   .padding = test::pad_kind(PadKind::kSame),
                   .bias = bias,
                   .dtype = DType::kF32};
  Case c = test::conv_case(s);
  c.data.seed = 3;
  c.checks = {"shape", "forward", "backward"};
  return c;
}

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

class ScaledForward : public test::DelegatingBackend {
 public:
  ScaledForward() : DelegatingBackend("planted.scaled_forward") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    y[5] *= 1.001;  // one element off by 0.1%
    return ok_status();
  }
};

TEST(ForwardCheck, CorrectBackendPassesAndPlantedErrorIsLocated) {
  test::DelegatingBackend correct("planted.none");
  EXPECT_EQ(check_case(small_conv(), correct).disposition, Disposition::kPassed);
  ScaledForward bad;
  const CaseResult r = check_case(small_conv(), bad);
  const CheckResult* f = find_check(r, "forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->disposition, Disposition::kFailed);
  ASSERT_FALSE(f->worst.empty());
  EXPECT_EQ(f->worst[0].tensor, "y");
  EXPECT_GT(f->max_error_ratio, 1.0);
  EXPECT_EQ(r.disposition, Disposition::kFailed);
}

TEST(ForwardCheck, AllZeroReferenceIsMistrustedNotPassed) {
  Case c = small_conv(false);
  auto geo = conv_geometry(c);
  c.tensors["x"] = Tensor::zeros(DType::kF32, geo->x_shape());  // y == 0 everywhere
  test::DelegatingBackend correct("planted.none");
  const CaseResult r = check_case(c, correct);
  const CheckResult* f = find_check(r, "forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->disposition, Disposition::kMistrusted);
  EXPECT_NE(f->message.find("all zero"), std::string::npos) << f->message;
}

class BiasGradientOfSampleZero : public test::DelegatingBackend {
 public:
  BiasGradientOfSampleZero() : DelegatingBackend("planted.db_no_batch_sum") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    const int64_t P = g.spatial.out_count();
    for (int64_t co = 0; co < g.out_channels; ++co) {  // db of sample 0 only
      double s = 0;
      for (int64_t p = 0; p < P; ++p) s += dy[co * P + p];
      (*db)[co] = s;
    }
    return ok_status();
  }
};

TEST(BackwardCheck, CatchesBiasGradientWithoutBatchSum) {
  BiasGradientOfSampleZero bad;
  const CaseResult r = check_case(small_conv(), bad);
  const CheckResult* b = find_check(r, "backward");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->disposition, Disposition::kFailed);
  EXPECT_NE(b->message.find("db"), std::string::npos) << b->message;
}

class ValidForSame : public test::DelegatingBackend {
 public:
  ValidForSame() : DelegatingBackend("planted.valid_for_same") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    y.shape.back() -= 2;  // reports the valid extent of a 3-wide kernel
    return ok_status();
  }
};

TEST(ShapeCheck, NamesErosion) {
  ValidForSame bad;
  const CaseResult r = check_case(small_conv(), bad);
  const CheckResult* s = find_check(r, "shape");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->disposition, Disposition::kFailed);
  EXPECT_NE(s->message.find("eroded by 2"), std::string::npos) << s->message;
}

TEST(Runner, ExpectedErrorRules) {
  auto ref = make_reference_backend();
  LoadedCase refused{
      "f.yaml", 3, invalid_argument("conv.groups: 2 does not divide input.channels 3"), {false, "does not divide"}};
  EXPECT_EQ(check_loaded(refused, *ref).disposition, Disposition::kPassed);
  refused.expect.error = "something else";
  EXPECT_EQ(check_loaded(refused, *ref).disposition, Disposition::kFailed);
  refused.expect = {};
  EXPECT_EQ(check_loaded(refused, *ref).disposition, Disposition::kInvalid);
  LoadedCase accepted{"f.yaml", 1, small_conv(), {false, "does not divide"}};
  EXPECT_EQ(check_loaded(accepted, *ref).disposition, Disposition::kFailed);
  // The expected text is matched against the reason, not the location before it: a
  // refusal for another reason on the expected line does not pass.
  LoadedCase located{
      "f.yaml", 3, invalid_argument("f.yaml:3: conv.groups: 2 does not divide input.channels 3"), {false, "f.yaml:3"}};
  EXPECT_EQ(check_loaded(located, *ref).disposition, Disposition::kFailed);
  located.expect.error = "conv.groups: 2 does not";
  EXPECT_EQ(check_loaded(located, *ref).disposition, Disposition::kPassed);
}

TEST(Isolation, CrashAndHangBecomeDispositionsAndTheRunGoesOn) {
  CaseResult label;
  label.case_name = "t";
  std::vector<IsolatedTask> tasks;
  tasks.push_back({label, [] {
                     std::raise(SIGSEGV);
                     return CaseResult{};
                   }});
  tasks.push_back({label, [] {
                     std::this_thread::sleep_for(std::chrono::seconds(30));
                     return CaseResult{};
                   }});
  tasks.push_back(
      {label, [] {
         CaseResult r;
         r.case_name = "fine";
         r.checks.push_back({"forward", Disposition::kFailed, "msg", 2.5, 1e-3, {{"y", {0, 1}, 1.5, 2.0, 0.25}}});
         r.disposition = Disposition::kFailed;
         return r;
       }});
  const auto results = run_tasks(tasks, IsolateOptions{2, 1.0, false, nullptr});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].disposition, Disposition::kCrashed);
  EXPECT_NE(results[0].message.find("signal"), std::string::npos);
  EXPECT_EQ(results[1].disposition, Disposition::kTimeout);
  EXPECT_EQ(results[2].case_name, "fine");  // the result crossed the pipe intact
  ASSERT_EQ(results[2].checks.size(), 1u);
  EXPECT_EQ(results[2].checks[0].worst.at(0).index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(results[2].checks[0].max_error_ratio, 2.5);
}

// Each of N forked workers gets cores / N threads for its checks' probes, so that a run
// with --jobs N holds about as many threads as cores (a run with fewer tasks than jobs
// has that many workers); outside run_tasks: one per core.
TEST(Isolation, WorkersShareTheCores) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(task_threads(), cores);
  CaseResult label;
  label.case_name = "t";
  for (const auto& [jobs, count] :
       {std::pair{1, 3}, std::pair{2, 4}, std::pair{3 * cores, 3 * cores}, std::pair{4, 1}}) {
    std::vector<IsolatedTask> tasks;
    for (int t = 0; t < count; ++t) {
      tasks.push_back({label, [] {
                         CaseResult r;
                         r.message = std::to_string(task_threads());
                         return r;
                       }});
    }
    const auto results = run_tasks(tasks, IsolateOptions{jobs, 10.0, false, nullptr});
    ASSERT_EQ(results.size(), static_cast<size_t>(count));
    const int workers = std::min(jobs, count);
    for (const CaseResult& r : results) {
      EXPECT_EQ(r.message, std::to_string(std::max(1, cores / workers))) << jobs << " jobs, " << count << " tasks";
    }
    EXPECT_EQ(task_threads(), cores);
  }
}

TEST(Report, ExitCodesAndSummaryKeys) {
  auto with = [](std::initializer_list<Disposition> ds) {
    std::vector<CaseResult> rs;
    for (Disposition d : ds) rs.push_back(CaseResult{"c", "f:1", "reference", d, "", {}, "", 0});
    return rs;
  };
  EXPECT_EQ(exit_code(with({Disposition::kPassed, Disposition::kSkipped})), 0);
  EXPECT_EQ(exit_code(with({Disposition::kPassed, Disposition::kMistrusted})), 1);
  EXPECT_EQ(exit_code(with({Disposition::kInvalid, Disposition::kCrashed})), 2);  // invalid input wins
  EXPECT_EQ(exit_code(with({Disposition::kFailed, Disposition::kInvalid})), 2);
  EXPECT_EQ(exit_code(with({Disposition::kInvalid, Disposition::kPassed})), 2);
  const auto counts = summary_counts(with({Disposition::kPassed, Disposition::kTimeout}));
  EXPECT_EQ(counts.at("passed"), 1);
  EXPECT_EQ(counts.at("timeout"), 1);
  EXPECT_EQ(counts.at("failed"), 0);
  const std::string json = report_json(with({Disposition::kFailed}), RunInfo{});
  EXPECT_NE(json.find("\"summary\": {"), std::string::npos);
  EXPECT_NE(json.find("\"disposition\": \"FAILED\""), std::string::npos);
}

}  // namespace
}  // namespace kc

namespace kc {
namespace {

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

// conv_bias_relu whose backward decides relu' with its own threshold on z.
class ReluThreshold : public test::DelegatingBackend {
 public:
  explicit ReluThreshold(double t) : DelegatingBackend("planted.relu_threshold"), t_(t) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    Tensor z = Tensor::filled(DType::kF64, g.y_shape(), 0.0);
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, false, z));
    Tensor dz = dy;
    for (int64_t i = 0; i < dz.size(); ++i) dz[i] = relu && z[i] > t_ ? dy[i] : (relu ? 0.0 : dy[i]);
    return reference().conv_backward(g, x, w, b, false, dz, dx, dw, db);
  }

 private:
  double t_;
};

TEST(BackwardCheck, FusedReluMaskMayDifferOnlyWhereZIsWithinRoundingOfZero) {
  // 1-D k 2, b 0. Sample 0: z[0] = 0.1*1 + (-0.1)*1 = 0 in exact arithmetic but ~1e-18
  // after the f64 roundings of 0.1 (a kernel may get either sign); z[1] = 0.1*1 +
  // (-0.1)*0.5 = 0.05. Sample 1 (x 1, 0.5, 0.25) has z = 0.05 and 0.025, clear of 0, so
  // the ambiguity swamps none of dx, dw and db and a pass is trusted.
  Case c;
  c.dtype = DType::kF64;
  c.input = {2, 1, {3}};
  ConvParams p;
  p.kernel = {2};
  c.op = ConvBiasReluParams{p};
  c.tensors["x"] = Tensor::zeros(DType::kF64, {2, 1, 3});
  c.tensors["x"].data = {1.0, 1.0, 0.5, 1.0, 0.5, 0.25};
  c.tensors["w"] = Tensor::zeros(DType::kF64, {1, 1, 2});
  c.tensors["w"].data = {0.1, -0.1 + 1e-17};
  c.tensors["b"] = Tensor::zeros(DType::kF64, {1});
  c.tensors["dy"] = Tensor::filled(DType::kF64, {2, 1, 2}, 1.0);
  c.checks = {"backward"};
  ReluThreshold tiny(1e-15);  // drops only the ambiguous z[0]
  const CaseResult ok = check_case(c, tiny);
  ASSERT_FALSE(ok.checks.empty());
  EXPECT_EQ(ok.checks[0].disposition, Disposition::kPassed) << ok.checks[0].message;
  EXPECT_NE(ok.checks[0].message.find("either side of relu'"), std::string::npos);
  ReluThreshold wrong(0.06);  // also drops z = 0.05 and 0.025, which are clearly positive
  const CaseResult bad = check_case(c, wrong);
  EXPECT_EQ(bad.checks.at(0).disposition, Disposition::kFailed);
}

}  // namespace
}  // namespace kc
