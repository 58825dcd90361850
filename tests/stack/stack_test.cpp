// op: stack: erosion arithmetic, the executor's checkpointed gradients and bookkeeping
// (worked by hand), the stack checks on the reference and on planted-bug backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/validate.h"
#include "kc/case_io.h"
#include "kc/runner.h"
#include "stack/stack_exec.h"
#include "support/delegating_backend.h"
#include "support/f32_accumulation.h"

namespace kc {
namespace {

Case stack_case(int64_t depth, int64_t extent, PadKind pad, bool relu, CheckpointPolicy cp = {}, int64_t channels = 2,
                DType dtype = DType::kF64) {
  Case c;
  c.name = "stack test";
  c.dtype = dtype;
  c.input = {1, 1, {extent, extent}};
  StackParams p;
  p.depth = depth;
  p.conv.out_channels = channels;
  p.conv.kernel = {3, 3};
  p.conv.padding.kind = pad;
  p.conv.bias = true;
  p.relu = relu;
  p.checkpoint = cp;
  c.op = p;
  c.data.seed = 11;
  c.deterministic = true;
  return c;
}

TEST(StackShape, FiftyValidLayersOn128Erode100PerDim) {
  auto layers = stack_layers(stack_case(50, 128, PadKind::kValid, true));
  ASSERT_TRUE(layers.ok()) << layers.status().to_string();
  ASSERT_EQ(layers->size(), 50u);
  EXPECT_EQ(layers->back().out_shape(), Dims({1, 2, 28, 28}));
  EXPECT_EQ((*layers)[36].in_shape(), Dims({1, 2, 56, 56}));
  auto same = stack_layers(stack_case(50, 128, PadKind::kSame, true));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->back().out_shape(), Dims({1, 2, 128, 128}));
}

// The memory cap of a stack is over its layers' tensors: a layer is not refused as if it
// were a single-op case holding the checks' copies (5 times its tensors for a conv).
TEST(StackShape, MemoryCapIsTheStacksNotEachLayersSingleOpEstimate) {
  const Case one = stack_case(1, 128, PadKind::kSame, false);
  const int64_t stack_bytes = estimate_case_bytes(one);
  auto layers = stack_layers(one);
  ASSERT_TRUE(layers.ok());
  ASSERT_GT(estimate_case_bytes((*layers)[0].conv_case), stack_bytes);
  Limits limits;
  limits.max_case_bytes = stack_bytes;
  EXPECT_TRUE(validate(one, limits).ok()) << validate(one, limits).to_string();
  limits.max_case_bytes = stack_bytes - 1;
  EXPECT_EQ(validate(one, limits).code(), StatusCode::kResourceExhausted);
}

TEST(StackShape, LayerThatErodesToNothingIsNamed) {
  const Status s = validate(stack_case(40, 74, PadKind::kValid, false));
  EXPECT_NE(s.message().find("stack layer 37: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("empty output"), std::string::npos) << s.message();
  EXPECT_FALSE(validate(stack_case(0, 8, PadKind::kSame, false)).ok());
  EXPECT_FALSE(validate(stack_case(kMaxStackDepth + 1, 8, PadKind::kSame, false)).ok());
}

TEST(StackIo, RoundTripsThroughYaml) {
  Case c = stack_case(7, 16, PadKind::kSame, true, {CheckpointKind::kEvery, 3});
  MaxPoolParams pool;
  pool.kernel = {3, 3};
  pool.stride = {1, 1};
  pool.padding.pairs = {{1, 1}, {1, 1}};
  std::get<StackParams>(c.op).pool = pool;
  const std::string yaml = case_to_yaml(c);
  EXPECT_NE(yaml.find("checkpoint: \"every:3\""), std::string::npos) << yaml;
  auto back = parse_cases(yaml, "t.yaml");
  ASSERT_EQ(back.size(), 1u);
  ASSERT_TRUE(back[0].c.ok()) << back[0].c.status().to_string();
  EXPECT_EQ(*back[0].c, c);
}

TEST(StackExecutor, CheckpointedGradientsAreBitwiseEqualOnTheReference) {
  const Case c = stack_case(9, 12, PadKind::kSame, true);
  auto layers = stack_layers(c);
  ASSERT_TRUE(layers.ok());
  auto in = make_stack_inputs(c, *layers);
  ASSERT_TRUE(in.ok());
  auto ref = make_reference_backend();
  const StackRun plain = run_stack(*ref, *layers, *in, {{}, DType::kF64});
  ASSERT_TRUE(plain.status.ok());
  for (CheckpointPolicy p : {CheckpointPolicy{CheckpointKind::kEvery, 2}, CheckpointPolicy{CheckpointKind::kSqrt, 0},
                             CheckpointPolicy{CheckpointKind::kEvery, 1}}) {
    const StackRun kept = run_stack(*ref, *layers, *in, {p, DType::kF64});
    ASSERT_TRUE(kept.status.ok());
    EXPECT_TRUE(bitwise_equal(plain.dx, kept.dx)) << checkpoint_name(p);
    for (size_t l = 0; l < plain.dw.size(); ++l) {
      EXPECT_TRUE(bitwise_equal(plain.dw[l], kept.dw[l])) << checkpoint_name(p) << " layer " << l;
      EXPECT_TRUE(bitwise_equal(plain.db[l], kept.db[l])) << checkpoint_name(p) << " layer " << l;
    }
  }
}

// One channel, SAME, f64: every record is a 4x4 f64 input, s = 128 bytes.
//   none, depth 5:    keeps all 5 records: 640 bytes, nothing recomputed.
//   every:2, depth 5: segments [0,2) [2,4) [4,5): 4 layers recomputed; peak while
//                     differentiating [2,4): checkpoint 0 + 2 records = 3s = 384.
//   sqrt, depth 5:    K = 3, segments [0,3) [3,5): 3 recomputed; peak 3s = 384.
//   sqrt, depth 4:    K = 2, segments [0,2) [2,4): 2 recomputed; peak s + 2s = 384.
TEST(StackExecutor, RecomputationsAndPeakBytesWorkedByHand) {
  struct Want {
    int64_t depth;
    CheckpointPolicy p;
    int64_t recomputations, peak;
  };
  const Want wants[] = {{5, {}, 0, 640},
                        {5, {CheckpointKind::kEvery, 2}, 4, 384},
                        {5, {CheckpointKind::kSqrt, 0}, 3, 384},
                        {4, {CheckpointKind::kSqrt, 0}, 2, 384}};
  auto ref = make_reference_backend();
  for (const Want& w : wants) {
    const Case c = stack_case(w.depth, 4, PadKind::kSame, false, w.p, 1);
    auto layers = stack_layers(c);
    ASSERT_TRUE(layers.ok());
    auto in = make_stack_inputs(c, *layers);
    ASSERT_TRUE(in.ok());
    const StackRun run = run_stack(*ref, *layers, *in, {w.p, DType::kF64});
    const CheckpointPlan plan = plan_checkpoints(*layers, w.p, DType::kF64);
    const std::string what = checkpoint_name(w.p) + " depth " + std::to_string(w.depth);
    EXPECT_EQ(run.recomputations, w.recomputations) << what;
    EXPECT_EQ(run.peak_bytes, w.peak) << what;
    EXPECT_EQ(plan.recomputations, w.recomputations) << what;
    EXPECT_EQ(plan.peak_bytes, w.peak) << what;
    EXPECT_LE(plan.peak_bytes, plan.bound_bytes) << what;
  }
}

TEST(StackChecks, ReferencePassesAndInfluenceNamesBorderBlindSpotsOnlyForValid) {
  // Three input channels: a single channel's |dx| can cancel to near zero by chance.
  auto ref = make_reference_backend();
  Case valid_case = stack_case(8, 24, PadKind::kValid, false), same_case = stack_case(8, 24, PadKind::kSame, false);
  valid_case.input.channels = same_case.input.channels = 3;
  const CaseResult valid = check_case(valid_case, *ref);
  const CaseResult same = check_case(same_case, *ref);
  ASSERT_EQ(valid.disposition, Disposition::kPassed) << valid.message;
  ASSERT_EQ(same.disposition, Disposition::kPassed) << same.message;
  const CheckResult* vi = find_check(valid, "influence");
  const CheckResult* si = find_check(same, "influence");
  ASSERT_TRUE(vi && si);
  EXPECT_NE(vi->message.find("border blind spots"), std::string::npos) << vi->message;
  EXPECT_NE(si->message.find("no blind spots"), std::string::npos) << si->message;
  const CheckResult* shape = find_check(valid, "shape");
  ASSERT_TRUE(shape);
  EXPECT_NE(shape->message.find("24x24 -> 22x22"), std::string::npos) << shape->message;
  EXPECT_NE(shape->message.find("dim 0 loses 16 positions"), std::string::npos) << shape->message;
  EXPECT_NE(find_check(valid, "checkpoint"), nullptr);
}

// conv_backward adds a different tiny perturbation to dx on every call: a race.
class RacyBackward final : public test::DelegatingBackend {
 public:
  RacyBackward() : DelegatingBackend("racy_backward") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    dx[calls_ % dx.size()] *= 1.0 + 1e-12 * static_cast<double>(1 + calls_ % 7);
    ++calls_;
    return ok_status();
  }

 private:
  int64_t calls_ = 0;
};

// conv_backward returns the mean of the weight gradient over batch instead of its sum.
class HalvedWeightGradient final : public test::DelegatingBackend {
 public:
  HalvedWeightGradient() : DelegatingBackend("halved_dw") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    for (double& v : dw.data) v *= 0.5;
    return ok_status();
  }
};

TEST(StackChecks, NondeterministicBackwardIsCaughtByCheckpoint) {
  RacyBackward racy;
  const CaseResult r = check_case(stack_case(6, 12, PadKind::kSame, true, {CheckpointKind::kSqrt, 0}), racy);
  const CheckResult* cp = find_check(r, "checkpoint");
  ASSERT_TRUE(cp);
  EXPECT_EQ(cp->disposition, Disposition::kFailed) << cp->message;
  EXPECT_NE(cp->message.find("not bitwise equal"), std::string::npos) << cp->message;
  EXPECT_EQ(r.disposition, Disposition::kFailed);
}

// A backend's supports() is its code too: an exception out of it is the case's CRASHED,
// named with the call, for a stack (asked per layer) as for a single op.
class ThrowingSupports final : public test::DelegatingBackend {
 public:
  ThrowingSupports() : DelegatingBackend("throwing_supports") {}
  Status supports(const Case&) const override { throw std::runtime_error("no idea"); }
};

TEST(StackChecks, AnExceptionFromSupportsIsACrashNamingTheCall) {
  ThrowingSupports be;
  Case single = stack_case(1, 8, PadKind::kSame, false);
  single.op = std::get<StackParams>(single.op).conv;
  for (const Case& c : {stack_case(2, 8, PadKind::kSame, false), single}) {
    const CaseResult r = check_case(c, be);
    EXPECT_EQ(r.disposition, Disposition::kCrashed) << r.message;
    EXPECT_EQ(r.message, "exception: its supports() threw: no idea");
  }
}

TEST(StackChecks, WrongBackwardIsCaughtByBackward) {
  HalvedWeightGradient bad;
  const CaseResult r = check_case(stack_case(6, 12, PadKind::kSame, true, {CheckpointKind::kSqrt, 0}), bad);
  const CheckResult* bw = find_check(r, "backward");
  ASSERT_TRUE(bw);
  EXPECT_EQ(bw->disposition, Disposition::kFailed) << bw->message;
  EXPECT_NE(bw->message.find("dw of layer"), std::string::npos) << bw->message;
}

// conv_backward leaves the first input row of every plane without gradient.
class DroppedBorderRow final : public test::DelegatingBackend {
 public:
  DroppedBorderRow() : DelegatingBackend("dropped_border_row") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    const int64_t width = dx.shape.back(), plane = g.spatial.in_count();
    for (int64_t p = 0; p < dx.size() / plane; ++p) {
      for (int64_t i = 0; i < width; ++i) dx[p * plane + i] = 0.0;
    }
    return ok_status();
  }
};

TEST(StackChecks, DroppedBorderGradientIsCaughtByInfluence) {
  DroppedBorderRow bad;
  for (DType d : {DType::kF64, DType::kF16}) {
    Case c = stack_case(4, 12, PadKind::kSame, false, {}, 2, d);
    c.input.channels = 3;
    const CaseResult r = check_case(c, bad);
    const CheckResult* inf = find_check(r, "influence");
    ASSERT_TRUE(inf);
    EXPECT_EQ(inf->disposition, Disposition::kFailed) << inf->message;
    EXPECT_NE(inf->message.find("dropped: no gradient at all in input row 0"), std::string::npos) << inf->message;
  }
}

// In bf16 a relu input or pool maximum within rounding of its alternative flips, so the
// gradient of a single position can land elsewhere (found by the stack generator): the
// reference itself must pass, with the positions reported.
TEST(StackChecks, SinglePositionsRoutedElsewhereInLowPrecisionAreNotDropped) {
  Case c;
  c.name = "bf16 flips";
  c.dtype = DType::kBF16;
  c.input = {1, 2, {13, 4}};
  StackParams p;
  p.depth = 2;
  p.conv.out_channels = 2;
  p.conv.kernel = {2, 1};
  p.conv.stride = {2, 1};
  p.conv.dilation = {2, 1};
  p.conv.padding.kind = PadKind::kExplicit;
  p.conv.padding.pairs = {{0, 0}, {0, 0}};
  p.relu = true;
  MaxPoolParams pool;
  pool.kernel = {2, 1};
  pool.padding.pairs = {{0, 1}, {0, 0}};
  p.pool = pool;
  c.op = p;
  c.data = {13667, Fill::kNormal};
  auto ref = make_reference_backend();
  const CaseResult r = check_case(c, *ref);
  const CheckResult* inf = find_check(r, "influence");
  ASSERT_TRUE(inf);
  EXPECT_EQ(inf->disposition, Disposition::kPassed) << inf->message;
}

// Stacks the generator found where a correct low-precision run was judged wrong against
// f64: a db whose sum cancels (f32), bf16 values that round equal and tie in a max
// pool, which moves a whole row's gradient by the tie rule, and (f32) layer-2
// activations ~1e-4 that are differences of terms ~1, whose f32 error reaches layer 3's
// dw (2.4x the allowance before the propagated-variance term). Run as a backend that is
// not the oracle (the oracle's results under another name), so that every comparison
// of the candidate path is made.
TEST(StackChecks, CorrectLowPrecisionPassesWhereRoundingCancelsOrTies) {
  const char* yaml[] = {
      "{op: stack, dtype: f32, input: {batch: 1, channels: 1, spatial: [4]}, stack: {depth: 3, layer: {conv: "
      "{out_channels: 1, kernel: [2], bias: true}, relu: false}}, data: {seed: 47, fill: normal}}",
      "{op: stack, dtype: bf16, input: {batch: 1, channels: 1, spatial: [7, 10, 5]}, stack: {depth: 2, layer: {conv: "
      "{out_channels: 1, kernel: [3, 1, 2], dilation: [1, 1, 2], padding: same, padding_mode: circular}, relu: false, "
      "maxpool: {kernel: [3, 3, 2], stride: [2, 1, 1]}}}, data: {seed: 396767637917577, fill: normal}}",
      "{op: stack, dtype: f32, input: {batch: 1, channels: 1, spatial: [8]}, stack: {depth: 3, layer: {conv: "
      "{out_channels: 2, kernel: [1]}, relu: true}}, data: {seed: 744304330, fill: normal}}",
  };
  test::DelegatingBackend correct("correct");
  test::F32Accumulation f32_sums("f32-sums");
  for (const char* text : yaml) {
    auto cases = parse_cases(text, "found.yaml");
    ASSERT_EQ(cases.size(), 1u);
    ASSERT_TRUE(cases[0].c.ok()) << cases[0].c.status().to_string();
    for (Backend* b : {static_cast<Backend*>(&correct), static_cast<Backend*>(&f32_sums)}) {
      const CaseResult r = check_case(*cases[0].c, *b);
      for (const CheckResult& c : r.checks) {
        EXPECT_TRUE(c.disposition == Disposition::kPassed || c.disposition == Disposition::kMistrusted)
            << b->name() << ": " << text << "\n"
            << c.name << ": " << c.message;
      }
    }
  }
}

TEST(StackChecks, SingleOpChecksSayWhyTheyDoNotApply) {
  Case c = stack_case(3, 8, PadKind::kSame, true);
  c.checks = {"gradcheck", "checkpoint"};
  auto ref = make_reference_backend();
  const CaseResult r = check_case(c, *ref);
  const CheckResult* gc = find_check(r, "gradcheck");
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->disposition, Disposition::kSkipped);
  EXPECT_NE(gc->message.find("a stack is checked by"), std::string::npos) << gc->message;
}

// On the oracle the yardstick is the run under test: only the worst-case bound is
// judged. A correct kernel with f32 sums passes both.
TEST(StackChecks, DriftPassesTheOracleAndACorrectF32AccumulatingKernel) {
  auto ref = make_reference_backend();
  test::F32Accumulation correct;
  for (DType d : {DType::kF16, DType::kBF16}) {
    const Case c = stack_case(10, 12, PadKind::kSame, true, {}, 4, d);
    const CheckResult* drift = nullptr;
    const CaseResult r = check_case(c, *ref);
    ASSERT_TRUE(drift = find_check(r, "drift")) << dtype_name(d);
    EXPECT_EQ(drift->disposition, Disposition::kPassed) << drift->message;
    EXPECT_NE(drift->message.find("depth 10:"), std::string::npos) << drift->message;
    EXPECT_NE(drift->message.find("only the bound is judged"), std::string::npos) << drift->message;
    const CaseResult rc = check_case(c, correct);
    ASSERT_TRUE(drift = find_check(rc, "drift")) << dtype_name(d);
    EXPECT_EQ(drift->disposition, Disposition::kPassed) << drift->message;
    EXPECT_NE(drift->message.find("of the yardstick's"), std::string::npos) << drift->message;
  }
}

// conv_forward scales every output by (1 - 2^-12) before the executor rounds it to f16:
// a coherent relative bias of half f16's unit roundoff per layer (a per-channel
// scale folded into the weights after rounding it to f16 errs like this). Within the
// worst-case bound after the first layer, it adds up linearly over depth where rounding
// noise adds up as its square root.
class BiasedScale final : public test::DelegatingBackend {
 public:
  BiasedScale() : DelegatingBackend("biased_scale") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    for (double& v : y.data) v *= 1.0 - std::ldexp(1.0, -12);
    return ok_status();
  }
};

double overall_ratio(const std::string& message) {
  const std::string key = "over all layers ";
  const size_t at = message.rfind(key);
  return at == std::string::npos ? -1.0 : std::stod(message.substr(at + key.size()));
}

// Deep, narrow and replicate-padded linear stacks (where the bias scales every layer
// alike), in which single layers of two correct runs can differ by a factor of several:
// the bias is caught over all layers, the f32 kernel is not, with room on both sides of
// the limit (2).
TEST(StackChecks, CoherentBiasIsCaughtOverAllLayersAndF32AccumulationIsNot) {
  Case wide = stack_case(32, 16, PadKind::kSame, false, {}, 4, DType::kF16);
  wide.input.batch = 2;
  Case replicate = wide;
  std::get<StackParams>(replicate.op).conv.padding_mode = PaddingMode::kReplicate;
  const Case narrow = stack_case(48, 16, PadKind::kSame, false, {}, 2, DType::kF16);
  BiasedScale bad;
  test::F32Accumulation correct;
  for (const Case& c : {wide, replicate, narrow}) {
    SCOPED_TRACE(case_to_one_line(c));
    const CaseResult r = check_case(c, bad);
    const CheckResult* drift = find_check(r, "drift");
    ASSERT_TRUE(drift);
    EXPECT_EQ(drift->disposition, Disposition::kFailed) << drift->message;
    EXPECT_NE(drift->message.find("biased rounding (toward zero) or a coarser dtype"), std::string::npos)
        << drift->message;
    EXPECT_GT(overall_ratio(drift->message), 2.5) << drift->message;
    const CaseResult good = check_case(c, correct);
    const CheckResult* clean = find_check(good, "drift");
    ASSERT_TRUE(clean);
    EXPECT_EQ(clean->disposition, Disposition::kPassed) << clean->message;
    EXPECT_LT(overall_ratio(clean->message), 1.5) << clean->message;
  }
}

}  // namespace
}  // namespace kc
