// The stack backward check's routing gate (unforced_routing, stack_noise.h): which
// relu inputs and max-pool windows the oracle's values force, the check judged on
// pooled f32 stacks where they are, and not judged where a real f32 sum decides a
// relu input otherwise than the oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "checks/check_list.h"
#include "checks/window.h"
#include "kc/case_io.h"
#include "kc/runner.h"
#include "stack/noise.h"
#include "stack/stack_exec.h"
#include "support/delegating_backend.h"
#include "support/f32_accumulation.h"
#include "support/f32_direct.h"

namespace kc {
namespace {

// A pooled f32 stack after a SAME conv and relu: 2x2 windows of stride 2, or
// overlapping 3x3 windows of stride 2 (whose backward sums the cotangents of the
// windows that share a maximum).
Case pooled_f32_stack(int64_t depth, bool overlapping = false) {
  Case c;
  c.name = "pooled f32 stack";
  c.dtype = DType::kF32;
  c.input = {1, 1, {24, 24}};
  StackParams p;
  p.depth = depth;
  p.conv.out_channels = 3;
  p.conv.kernel = {3, 3};
  p.conv.padding.kind = PadKind::kSame;
  p.conv.bias = true;
  p.relu = true;
  p.checkpoint = {CheckpointKind::kSqrt, 0};
  MaxPoolParams pool;
  pool.kernel = overlapping ? Dims{3, 3} : Dims{2, 2};
  pool.stride = {2, 2};
  p.pool = pool;
  c.op = p;
  c.data.seed = 11;
  c.deterministic = true;
  return c;
}

// Every max pool routes each window's gradient to its first tap inside the input, not
// to its argmax.
class PoolGradientToFirstTap final : public test::DelegatingBackend {
 public:
  PoolGradientToFirstTap() : DelegatingBackend("pool_gradient_to_first_tap") {}
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices == nullptr) return reference().maxpool_backward(g, dy, indices, dx);
    IndexTensor first = *indices;
    const int64_t plane_out = g.spatial.out_count();
    for (size_t i = 0; i < first.data.size(); ++i) {
      const int64_t o = static_cast<int64_t>(i) % plane_out;
      first.data[i] = checks::rules::window_taps(g.spatial, unravel(o, g.spatial.out_dims())).front();
    }
    return reference().maxpool_backward(g, dy, &first, dx);
  }
};

// With a max pool in f32 the stack backward applies where the oracle's values force
// every routing decision (these random stacks: all of them): correct kernels with f32
// sums in another order (modelled, and real f32 arithmetic) pass, and a pool that
// routes the gradient to the wrong tap fails.
TEST(StackChecks, PooledF32BackwardIsJudgedWhereEveryArgmaxIsForced) {
  test::DelegatingBackend correct("correct");
  test::F32Accumulation f32_sums("f32-sums");
  test::F32Direct f32_direct;
  PoolGradientToFirstTap wrong;
  for (const Case& c : {pooled_f32_stack(1), pooled_f32_stack(3), pooled_f32_stack(3, true)}) {
    SCOPED_TRACE(case_to_one_line(c));
    for (Backend* b :
         {static_cast<Backend*>(&correct), static_cast<Backend*>(&f32_sums), static_cast<Backend*>(&f32_direct)}) {
      const CaseResult r = check_case(c, *b);
      const CheckResult* bw = find_check(r, "backward");
      ASSERT_TRUE(bw);
      EXPECT_EQ(bw->disposition, Disposition::kPassed) << b->name() << ": " << bw->message;
      EXPECT_LT(bw->max_error_ratio, 0.1) << bw->message;
    }
    const CaseResult r = check_case(c, wrong);
    const CheckResult* bw = find_check(r, "backward");
    ASSERT_TRUE(bw);
    EXPECT_EQ(bw->disposition, Disposition::kFailed) << bw->message;
  }
}

// One layer, a 1x1 conv with w = 1 (z = x summed over the channels, plus b) on 8
// positions of one channel unless asked, in f32; optionally a max pool of 2, stride 2:
// windows (x0, x1) (x2, x3) (x4, x5) (x6, x7).
struct GateCase {
  Case c;
  std::vector<StackLayer> layers;
  StackInputs in;
};

GateCase gate_case(bool relu, bool pool, bool bias = false, TieRule tie = TieRule::kFirst, int64_t channels = 1,
                   int64_t extent = 8) {
  GateCase g;
  g.c.name = "routing gate";
  g.c.dtype = DType::kF32;
  g.c.input = {1, channels, {extent}};
  StackParams p;
  p.depth = 1;
  p.conv.out_channels = 1;
  p.conv.kernel = {1};
  p.conv.bias = bias;
  p.relu = relu;
  if (pool) {
    MaxPoolParams mp;
    mp.kernel = {2};
    mp.stride = {2};
    mp.tie = tie;
    p.pool = mp;
  }
  g.c.op = p;
  g.layers = *stack_layers(g.c);
  g.in = *make_stack_inputs(g.c, g.layers);
  for (double& w : g.in.w[0].data) w = 1.0;
  return g;
}

// The oracle's run as the stack checks see it: f64, activations and conv cotangents kept.
StackRun oracle_run(const std::vector<StackLayer>& layers, const StackInputs& in) {
  StackRunOptions keep{CheckpointPolicy{}, DType::kF64, true, true};
  keep.keep_conv_grads = true;
  return run_stack(*make_reference_backend(), layers, in, keep);
}

// unforced_routing on x (and b) with the oracle's run, as the backward check calls it.
std::string gate(GateCase& g, std::vector<double> x, double b = 0.0) {
  g.in.x.data.assign(x.begin(), x.end());
  if (g.layers[0].user_bias) g.in.b[0][0] = b;
  const StackRun ref = oracle_run(g.layers, g.in);
  EXPECT_TRUE(ref.status.ok());
  const StackContext s{g.layers, g.in, ref, ref, ref};
  return checks::unforced_routing(s, unit_roundoff(DType::kF32), 6.0);
}

// The gate: a window whose maximum ties another tap, or is nearer to it (or, after a
// relu, to 0) than 6 standard deviations of rounding (here about 2u per unit value), is
// named, and so is a relu input that near 0; clear decisions, windows of relu zeros
// that stay below 0, and ties between taps that are nothing but the bias are not.
TEST(StackChecks, RoutingDecisionsWithinRoundingAreNamed) {
  const double u = unit_roundoff(DType::kF32);
  GateCase pooled = gate_case(false, true);
  EXPECT_EQ(gate(pooled, {1.0, 0.5, 0.25, 2.0, -1.0, -2.0, 3.0, 1.5}), "");
  EXPECT_EQ(gate(pooled, {1.0, 1.0 - 40 * u, 0.25, 2.0, -1.0, -2.0, 3.0, 1.5}), "");  // about 14 sigma apart
  const std::string tie = gate(pooled, {1.0, 1.0, 0.25, 2.0, -1.0, -2.0, 3.0, 1.5});
  EXPECT_NE(tie.find("layer 1: 1 of 4 max-pool windows hold their maximum within 6 standard deviations"),
            std::string::npos)
      << tie;
  const std::string near = gate(pooled, {1.0, 1.0 - 4 * u, 2.0, 2.0 * (1.0 - 4 * u), -1.0, -2.0, 3.0, 3.0 + 8 * u});
  EXPECT_NE(near.find("layer 1: 3 of 4 max-pool windows"), std::string::npos) << near;

  // With a relu, z = x - 1 (b = -1): an input near 0 is a cancellation of terms near 1.
  GateCase relu_pooled = gate_case(true, true, true);
  const std::vector<double> clear = {2.0, 1.5, 1.25, 3.0, 0.0, -1.0, 4.0, 2.5};  // (-1, -2): zeros that stay
  EXPECT_EQ(gate(relu_pooled, clear, -1.0), "");
  std::vector<double> x = clear;
  x[4] = 1.0 - 4 * u;  // z = -4u could round above 0 and take the window's gradient
  const std::string lifted = gate(relu_pooled, x, -1.0);
  EXPECT_NE(lifted.find("layer 1: 1 of 4 max-pool windows hold their maximum within 6 standard deviations of "
                        "rounding of another tap or of 0"),
            std::string::npos)
      << lifted;
  x = clear;
  x[0] = 1.0 + 4 * u;  // the maximum, z = 4u, could round to 0 or below
  x[1] = 0.0;
  EXPECT_NE(gate(relu_pooled, x, -1.0).find("1 of 4"), std::string::npos);

  GateCase relu_only = gate_case(true, false, true);
  EXPECT_EQ(gate(relu_only, clear, -1.0), "");
  x = clear;
  x[4] = 1.0 + 4 * u;
  x[6] = 1.0 - 4 * u;
  const std::string flip = gate(relu_only, x, -1.0);
  EXPECT_NE(flip.find("layer 1: 2 of 8 relu inputs lie within 6 standard deviations of rounding of 0"),
            std::string::npos)
      << flip;

  // x0 = x1 = 0: both taps are the bias alone, exactly b in any run, and their gradient
  // reaches no dx or dw: their tie is harmless, even under the tie rule 'any'. Equal
  // values with terms behind them are not.
  GateCase biased = gate_case(false, true, true, TieRule::kAny);
  EXPECT_EQ(gate(biased, {0.0, 0.0, 0.25, 2.0, -1.0, -2.0, 3.0, 1.5}, 0.3), "");
  EXPECT_NE(gate(biased, {0.5, 0.5, 0.25, 2.0, -1.0, -2.0, 3.0, 1.5}, 0.3).find("1 of 4"), std::string::npos);
}

// A relu input that sums to -2^-27 exactly but to +2^-27 in sequential f32 (channels
// 1, -2^-26, -1, 2^-27): a correct f32 kernel passes the gradient through where the
// oracle's relu stops it. The backward check must not judge it (it used to fail it,
// with and without a pool after the relu), and says why.
TEST(StackChecks, ReluInputWithinRoundingOfZeroIsNotJudged) {
  for (bool pool : {false, true}) {
    GateCase g = gate_case(true, pool, false, TieRule::kFirst, 4, 4);
    const std::vector<StackLayer>& layers = g.layers;
    StackInputs& in = g.in;
    const double t = std::ldexp(1.0, -26), h = std::ldexp(1.0, -27);
    in.x.data = {1.0, -0.5, 1.0, 0.5, -t, 0, 0, 0, -1.0, 0, 0, 0, h, 0, 0, 0};  // channel by channel
    auto oracle = make_reference_backend();
    test::F32Direct f32;
    const StackRun ref = oracle_run(layers, in);
    const StackRun cand = run_stack(f32, layers, in, {CheckpointPolicy{}, DType::kF32, true, true});
    const StackRun lowered = run_stack(*oracle, layers, in, {CheckpointPolicy{}, DType::kF32, true, true});
    ASSERT_TRUE(ref.status.ok() && cand.status.ok() && lowered.status.ok());
    ASSERT_EQ(ref.activations[0][0], 0.0);   // the oracle's relu stops it,
    ASSERT_GT(cand.activations[0][0], 0.0);  // real f32 lets it through
    const StackContext s{layers, in, ref, cand, lowered};
    const OpInputs none_in;
    const OpOutputs none_out;
    const CheckContext ctx{g.c, layers.front().conv, none_in, f32, false, none_out, none_out, none_out, &s};
    const std::string why = checks::stack_backward_not_applicable(ctx);
    EXPECT_NE(why.find(pool ? "max-pool windows" : "relu inputs lie within"), std::string::npos) << why;
    // What the check would say if it judged: a failure far past its allowance.
    const CheckResult judged = checks::stack_backward_run(ctx);
    EXPECT_EQ(judged.disposition, Disposition::kFailed) << judged.message;
  }
}

// The stack's own gradients under `cand`, judged by the stack backward and influence
// checks against the oracle in f64 (and in f32, the case's dtype).
std::vector<CheckResult> judge_stack(const GateCase& g, Backend& cand_backend) {
  auto oracle = make_reference_backend();
  const StackRun ref = oracle_run(g.layers, g.in);
  const StackRun cand = run_stack(cand_backend, g.layers, g.in, {CheckpointPolicy{}, DType::kF32, true, true});
  const StackRun lowered = run_stack(*oracle, g.layers, g.in, {CheckpointPolicy{}, DType::kF32, true, true});
  EXPECT_TRUE(ref.status.ok() && cand.status.ok() && lowered.status.ok());
  const StackContext s{g.layers, g.in, ref, cand, lowered};
  const OpInputs none_in;
  const OpOutputs none_out;
  const CheckContext ctx{g.c, g.layers.front().conv, none_in, cand_backend, false, none_out, none_out, none_out, &s};
  return {checks::stack_backward_run(ctx), checks::influence_run(ctx)};
}

// conv_backward halves dw, or writes no gradient into x's first position.
class StackGradientBug final : public test::DelegatingBackend {
 public:
  enum Bug { kNone, kHalvedDw, kDroppedFirstDx };
  explicit StackGradientBug(Bug bug) : DelegatingBackend("stack_gradient_bug"), bug_(bug) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (bug_ == kHalvedDw)
      for (double& v : dw.data) v *= 0.5;
    if (bug_ == kDroppedFirstDx) dx[0] = 0.0;
    return ok_status();
  }

 private:
  Bug bug_;
};

// A dx that the oracle makes one value everywhere (w = 0: dx = 0; w = NaN: dx = NaN)
// tells nothing, so a pass on it is MISTRUSTED; but a failure found beside it stands:
// a wrong dw where dx is all zero, a dropped gradient where the oracle's is NaN.
TEST(StackChecks, AConstantOracleDxLeavesAPassMistrustedAndAFailureFailed) {
  GateCase zero = gate_case(false, false);
  for (double& w : zero.in.w[0].data) w = 0.0;
  StackGradientBug correct(StackGradientBug::kNone), halved(StackGradientBug::kHalvedDw),
      dropped(StackGradientBug::kDroppedFirstDx);
  std::vector<CheckResult> r = judge_stack(zero, correct);
  EXPECT_EQ(r[0].disposition, Disposition::kMistrusted) << r[0].message;
  EXPECT_NE(r[0].message.find("reference dx is all zero"), std::string::npos) << r[0].message;
  EXPECT_EQ(r[1].disposition, Disposition::kMistrusted) << r[1].message;
  r = judge_stack(zero, halved);
  EXPECT_EQ(r[0].disposition, Disposition::kFailed) << r[0].message;
  EXPECT_NE(r[0].message.find("in dw of layer 1"), std::string::npos) << r[0].message;

  GateCase nan = gate_case(false, false);
  for (double& w : nan.in.w[0].data) w = std::nan("");
  r = judge_stack(nan, correct);
  EXPECT_EQ(r[0].disposition, Disposition::kMistrusted) << r[0].message;
  EXPECT_EQ(r[1].disposition, Disposition::kMistrusted) << r[1].message;
  r = judge_stack(nan, dropped);
  EXPECT_EQ(r[0].disposition, Disposition::kMistrusted) << r[0].message;  // no norm to judge NaN with
  EXPECT_EQ(r[1].disposition, Disposition::kFailed) << r[1].message;
  EXPECT_NE(r[1].message.find("dropped"), std::string::npos) << r[1].message;
  // dw = x * dy is finite where w is NaN: judged without dx, and a wrong one fails.
  r = judge_stack(nan, halved);
  EXPECT_EQ(r[0].disposition, Disposition::kFailed) << r[0].message;
  EXPECT_NE(r[0].message.find("in dw of layer 1"), std::string::npos) << r[0].message;
  EXPECT_NE(r[0].message.find("not judged, the oracle's is not finite everywhere: dx"), std::string::npos)
      << r[0].message;
  // A dx the oracle makes NaN in one channel only (w = [NaN, 1] over two input channels):
  // that is no reason to fail a correct backend (a NaN norm did); dx is named as not
  // judged, so a pass is MISTRUSTED, and dw, finite, is judged.
  GateCase one_nan = gate_case(false, false, false, TieRule::kFirst, 2);
  one_nan.in.w[0].data[0] = std::nan("");
  r = judge_stack(one_nan, correct);
  EXPECT_EQ(r[0].disposition, Disposition::kMistrusted) << r[0].message;
  EXPECT_NE(r[0].message.find("not judged, the oracle's is not finite everywhere: dx"), std::string::npos)
      << r[0].message;
  r = judge_stack(one_nan, halved);
  EXPECT_EQ(r[0].disposition, Disposition::kFailed) << r[0].message;
}

}  // namespace
}  // namespace kc
