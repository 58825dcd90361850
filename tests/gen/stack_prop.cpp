// Properties of the op: stack generator: every generated stack is valid and no layer's
// output is empty; its output depends on its input (a stack without relu always has a
// gradient to check, whatever its padding); the oracle passes every stack check
// (shape, backward, checkpoint, influence, drift) on generated stacks, MISTRUSTED only
// where the trust rule legitimately applies; the generator covers what the stack checks
// need (depth, every padding form and mode, pool, relu, bias, groups, every checkpoint
// policy and dtype); and shrinking goes toward depth 1 and keeps the least depth a
// failure needs.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "checks/checks.h"
#include "core/validate.h"
#include "gen_support.h"
#include "kc/backend.h"
#include "kc/case_io.h"
#include "kc/runner.h"
#include "stack/stack.h"
#include "stack/stack_exec.h"
#include "support/f32_accumulation.h"

namespace kc {
namespace {

const StackParams& stack_of(const Case& c) { return std::get<StackParams>(c.op); }

RC_GTEST_PROP(GenStack, EveryGeneratedStackIsValid, ()) {
  const gen::Options options;
  const Case c = *gen::valid_case(gen::only<StackParams>(), options);
  RC_ASSERT(op_name(c.op) == "stack");
  const Status s = validate(c);
  if (!s.ok()) RC_FAIL(s.to_string());
  const StackParams& p = stack_of(c);
  RC_ASSERT(p.depth >= 1 && p.depth <= options.caps.stack_depth);
  RC_ASSERT(spatial_rank(c) >= 1 && spatial_rank(c) <= 3);
  RC_ASSERT(c.tensors.empty() && c.expected.empty());
  RC_ASSERT(c.data.fill == Fill::kRandom || c.data.fill == Fill::kNormal);
  RC_ASSERT((p.checkpoint.kind == CheckpointKind::kEvery) == (p.checkpoint.every >= 1));
  if (p.pool) RC_ASSERT(p.pool->mode == PoolMode::kTraining);
  const auto layers = stack_layers(c);
  RC_ASSERT(layers.ok());
  RC_ASSERT(static_cast<int64_t>(layers->size()) == p.depth);
  for (const StackLayer& l : *layers) {
    for (size_t i = 2; i < l.out_shape().size(); ++i) RC_ASSERT(l.out_shape()[i] >= 1);
  }
}

// The oracle's dx of the stack, in f64 without checkpointing.
Tensor oracle_dx(const Case& c) {
  const std::vector<StackLayer> layers = *stack_layers(c);
  const StackInputs in = *make_stack_inputs(c, layers);
  auto reference = make_reference_backend();
  return run_stack(*reference, layers, in, {CheckpointPolicy{}, DType::kF64, true, false}).dx;
}

// The output of a generated stack depends on its input: without relu (which can cut
// every path for some data) the gradient to x is never all zero, whatever the padding
// (windows over zeros padding only), stride and pool do. In f64 and f32: weights
// rounded to f16 or bf16 take so few values that taps copying one element (replicate
// padding of a 1-wide input) can cancel exactly, w0 = -w1.
RC_GTEST_PROP(GenStack, StacksWithoutReluHaveAGradient, ()) {
  const Case c = *gen::op_case_of<StackParams>();
  RC_PRE(!stack_of(c).relu && (c.dtype == DType::kF64 || c.dtype == DType::kF32));
  const Tensor dx = oracle_dx(c);
  RC_ASSERT(dx.size() > 0);
  RC_ASSERT(std::any_of(dx.data.begin(), dx.data.end(), [](double v) { return v != 0.0; }));
}

// Empty when a MISTRUSTED verdict of `check` is legitimate, else why not: the oracle's
// dx (recomputed here) is degenerate by the trust rule (all zero in f64 and f32 only
// with relu, see StacksWithoutReluHaveAGradient).
std::string why_mistrust_is_wrong(const CheckResult& check, const Case& c) {
  const Tensor dx = oracle_dx(c);
  const bool sparse = check.name == "influence";  // it looks at zero gradients itself
  if (distrust("dx", dx, sparse).empty()) return "the oracle's dx is not degenerate";
  const bool wide = c.dtype == DType::kF64 || c.dtype == DType::kF32;
  if (wide && !stack_of(c).relu && !distrust("dx", dx, true).empty()) return "a stack without relu has an all-zero dx";
  return {};
}

// Empty when every stack check that applies ran on `backend` and passed (or was
// MISTRUSTED where the trust rule says so), else what went wrong: backward runs on
// candidates in f64 and f32 (with a max pool, where every argmax is forced: see
// stack_basic.cpp), drift in f16/bf16. `tags` gets each check's verdict.
std::string stack_verdict(const Case& c, Backend& backend, std::vector<std::string>& tags) {
  Case every = c;  // requested by name, a check that does not apply says why (SKIPPED)
  every.checks = {"shape", "backward", "checkpoint", "influence", "drift"};
  const CaseResult r = check_case(every, backend);
  if (r.disposition == Disposition::kInvalid || r.disposition == Disposition::kCrashed) {
    return std::string(disposition_name(r.disposition)) + ": " + r.message;
  }
  const bool low = c.dtype == DType::kF16 || c.dtype == DType::kBF16;
  std::set<std::string> ran;
  std::string backward_skipped;
  for (const CheckResult& check : r.checks) {
    tags.push_back(check.name + " " + std::string(disposition_name(check.disposition)));
    if (check.disposition == Disposition::kSkipped) {
      if (check.name == "backward") backward_skipped = check.message;
      continue;
    }
    ran.insert(check.name);
    std::string wrong;
    if (check.disposition == Disposition::kMistrusted) wrong = why_mistrust_is_wrong(check, c);
    if (check.disposition != Disposition::kPassed && check.disposition != Disposition::kMistrusted) {
      wrong = "a correct backend does not pass";
    }
    if (!wrong.empty()) return check.name + ": " + wrong + ": " + check.message;
  }
  std::set<std::string> want = {"shape", "checkpoint", "influence"};
  if (low) want.insert("drift");
  // f32: only where the oracle's values force every routing decision. Generated stacks
  // often make exact ties in max pools (a conv over an overlapping pool's repeated
  // maxima), which two correct runs need not order alike, and now and then a relu
  // input within rounding of 0: there the check says so (the gate itself is proved by
  // StackChecks.RoutingDecisionsWithinRoundingAreNamed).
  const bool unforced = c.dtype == DType::kF32 &&
                        (backward_skipped.find("max-pool windows hold their maximum within") != std::string::npos ||
                         backward_skipped.find("relu inputs lie within") != std::string::npos);
  if (backend.name() != "reference" && (c.dtype == DType::kF64 || c.dtype == DType::kF32) && !unforced) {
    want.insert("backward");
  }
  if (ran != want) return "the checks that ran are not the ones that apply";
  return {};
}

RC_GTEST_PROP(GenStack, ReferencePassesTheStackChecks, ()) {
  const Case c = *gen::op_case_of<StackParams>();
  auto reference = make_reference_backend();
  std::vector<std::string> tags;
  const std::string wrong = stack_verdict(c, *reference, tags);
  for (const std::string& t : tags) RC_TAG(t);
  if (!wrong.empty()) RC_FAIL(wrong);
}

// A correct kernel that is not the oracle (f32-sized accumulation errors): the checks
// that compare a candidate with the oracle, in f64 or in the case dtype, pass it. Those
// comparisons are statistical (two correct runs round differently): on 120,000
// generated stacks one tiny f32 stack reached its allowance. Here a fixed sample, so
// that the suite does not depend on the draw; `kcheck fuzz --op stack --plugin
// libkc_traps.so --backend trap.f32_accumulation` explores further.
TEST(GenStack, CorrectF32AccumulationPassesTheStackChecks) {
  test::F32Accumulation correct;
  const auto gen = gen::op_case_of<StackParams>();
  int pooled_f32 = 0, judged = 0;
  for (uint64_t k = 0; k < 400; ++k) {
    const Case c = gen::generate(gen, 2026, k).value();
    std::vector<std::string> tags;
    const std::string wrong = stack_verdict(c, correct, tags);
    EXPECT_TRUE(wrong.empty()) << case_to_one_line(c) << "\n" << wrong;
    if (c.dtype != DType::kF32 || !stack_of(c).pool) continue;
    ++pooled_f32;
    judged += std::count(tags.begin(), tags.end(), "backward PASSED") +
              std::count(tags.begin(), tags.end(), "backward MISTRUSTED");
  }
  // The gate leaves most pooled f32 stacks to the check (23 of 35 in this sample).
  EXPECT_GE(2 * judged, pooled_f32) << judged << " of " << pooled_f32 << " pooled f32 stacks judged";
}

TEST(GenStack, SameSeedAndIndexGiveTheSameCase) {
  const auto g = gen::valid_case(gen::only<StackParams>());
  for (uint64_t k = 0; k < 50; ++k) EXPECT_EQ(gen::generate(g, 7, k).value(), gen::generate(g, 7, k).value());
  EXPECT_FALSE(gen::generate(g, 7, 1).value() == gen::generate(g, 8, 1).value());
}

TEST(GenStack, OpSetNames) {
  EXPECT_EQ(gen::parse_op_set("stack"), gen::only<StackParams>());
  EXPECT_EQ(gen::op_set_name(gen::only<StackParams>()), "stack");
  // The mix (kAllOps) keeps to the single ops (a stack costs several single-op cases to check).
  const auto all = gen::valid_case(gen::kAllOps);
  for (uint64_t k = 0; k < 300; ++k) EXPECT_FALSE(is_stack(gen::generate(all, 1, k).value()));
}

// What a stack exercises, as named features.
std::set<std::string> features(const Case& c) {
  const StackParams& p = stack_of(c);
  std::set<std::string> f = {"rank" + std::to_string(spatial_rank(c)),
                             std::string(dtype_name(c.dtype)),
                             "fill." + std::string(fill_name(c.data.fill)),
                             "pad." + std::string(pad_kind_name(p.conv.padding.kind)),
                             "mode." + std::string(padding_mode_name(p.conv.padding_mode)),
                             "bias." + std::to_string(p.conv.bias),
                             "relu." + std::to_string(p.relu),
                             "checkpoint." + checkpoint_name(p.checkpoint).substr(0, 5)};
  f.insert(p.depth == 1 ? "depth1" : p.depth < 5 ? "depth2-4" : "depth5+");
  if (p.depth == gen::Caps{}.stack_depth) f.insert("depth.max");
  for (int64_t s : p.conv.stride) f.insert(s > 1 ? "stride>1" : "stride1");
  for (int64_t d : p.conv.dilation) f.insert(d > 1 ? "dilation>1" : "dilation1");
  if (p.conv.groups > 1) f.insert("grouped");
  if (c.input.batch > 1) f.insert("batch>1");
  if (p.pool) {
    f.insert({"pool", "pool.ceil_mode." + std::to_string(p.pool->ceil_mode),
              "tie." + std::string(tie_rule_name(p.pool->tie))});
    if (p.pool->stride.empty()) f.insert("pool.default_stride");
  }
  // Erosion to a single element: the edge a valid stack reaches.
  const std::vector<StackLayer> layers = *stack_layers(c);
  const Dims out = layers.back().out_shape(), in = layers.front().in_shape();
  for (size_t i = 2; i < out.size(); ++i) {
    if (out[i] < in[i]) f.insert("erodes");
    if (out[i] == 1 && in[i] > 1) f.insert("erodes.to1");
  }
  return f;
}

TEST(GenStack, CasesCoverWhatTheStackChecksNeed) {
  const std::set<std::string> seen = test::features_seen(gen::valid_case(gen::only<StackParams>()), 1500, features);
  test::expect_every_rank_dtype_and_fill(seen);
  test::expect_seen(seen, {"pad.explicit",     "pad.same",
                           "pad.same_lower",   "pad.valid",
                           "mode.zeros",       "mode.reflect",
                           "mode.replicate",   "mode.circular",
                           "bias.0",           "bias.1",
                           "relu.0",           "relu.1",
                           "checkpoint.none",  "checkpoint.every",
                           "checkpoint.sqrt",  "depth1",
                           "depth2-4",         "depth5+",
                           "depth.max",        "stride1",
                           "stride>1",         "dilation1",
                           "dilation>1",       "grouped",
                           "batch>1",          "pool",
                           "pool.ceil_mode.0", "pool.ceil_mode.1",
                           "tie.first",        "tie.last",
                           "tie.any",          "pool.default_stride",
                           "erodes",           "erodes.to1"});
}

Case shrink(uint64_t index, const std::function<bool(const Case&)>& fails) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const gen::ShrinkOutcome out =
      gen::shrink_case(gen::generate(gen::op_case_of<StackParams>(), 3, index), fails, deadline);
  EXPECT_FALSE(out.out_of_time);
  return out.smallest;
}

// The single simplest stack: one 1x1 conv layer on one element.
void expect_simplest_layer(const Case& c) {
  const StackParams& p = stack_of(c);
  EXPECT_EQ(c.input, (InputSpec{1, 1, {1}}));
  EXPECT_EQ(c.dtype, DType::kF64);
  EXPECT_EQ(c.data, (DataSpec{0, Fill::kRandom}));
  EXPECT_EQ(p.conv.out_channels, 1);
  EXPECT_EQ(p.conv.kernel, Dims{1});
  EXPECT_EQ(p.conv.stride, Dims{1});
  EXPECT_EQ(p.conv.dilation, Dims{1});
  EXPECT_EQ(p.conv.groups, 1);
  EXPECT_EQ(p.conv.padding, (PadSpec{PadKind::kExplicit, {{0, 0}}}));
  EXPECT_EQ(p.conv.padding_mode, PaddingMode::kZeros);
  EXPECT_FALSE(p.conv.bias);
  EXPECT_FALSE(p.relu);
  EXPECT_FALSE(p.pool.has_value());
  EXPECT_EQ(p.checkpoint, CheckpointPolicy{});
}

TEST(GenStackShrink, EveryFieldShrinksToItsSimplestValue) {
  for (uint64_t k = 0; k < 8; ++k) {
    const Case c = shrink(k, [](const Case&) { return true; });
    SCOPED_TRACE(case_to_one_line(c));
    EXPECT_EQ(stack_of(c).depth, 1);
    expect_simplest_layer(c);
  }
}

TEST(GenStackShrink, KeepsTheLeastDepthThatFails) {
  // A "bug" that shows from depth 3 on: the shrunk stack has exactly 3 layers, and
  // every other field at its simplest.
  auto fails = [](const Case& c) { return stack_of(c).depth >= 3; };
  const auto g = gen::op_case_of<StackParams>();
  int shrunk = 0;
  for (uint64_t k = 0; k < 200 && shrunk < 5; ++k) {
    const Case c0 = gen::generate(g, 3, k).value();
    if (stack_of(c0).depth < 5) continue;  // start well above the least failing depth
    ++shrunk;
    const Case c = shrink(k, fails);
    SCOPED_TRACE(case_to_one_line(c));
    EXPECT_EQ(stack_of(c).depth, 3);
    expect_simplest_layer(c);
  }
  EXPECT_EQ(shrunk, 5);
}

}  // namespace
}  // namespace kc
