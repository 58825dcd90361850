// Properties of the case generators: every generated case is valid; together they
// cover every parameter of docs/ops.md; the same (seed, index) gives the same
// case; and shrinking goes where a user wants a reproducer to be: rank 1, sizes 1,
// stride and dilation 1, no padding, f64, the plain fill, no inline data.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cmath>
#include <set>

#include "core/validate.h"
#include "gen/gen.h"
#include "gen_support.h"

namespace kc {
namespace {

using test::conv_of;

const std::vector<gen::OpSet> kOps = {gen::only<ConvParams>(), gen::only<MaxPoolParams>(),
                                      gen::only<ConvBiasReluParams>()};

RC_GTEST_PROP(GenValid, EveryGeneratedCaseIsValid, ()) {
  const gen::OpSet ops = *rc::gen::elementOf(kOps);
  const Case c = *gen::valid_case(ops);
  const Status s = validate(c);
  RC_ASSERT(s.ok());
  RC_ASSERT(gen::op_set_name(ops) == op_name(c.op));
  RC_ASSERT(spatial_rank(c) >= 1 && spatial_rank(c) <= 3);
  if (op_traits(c).relu) RC_ASSERT(conv_of(c).bias);
  if (c.tolerance.kind == ToleranceKind::kExact) RC_ASSERT(c.data.fill == Fill::kInteger);
  for (const auto& [name, t] : c.tensors) {
    RC_ASSERT(name == "x");
    RC_ASSERT(t.dtype == c.dtype);
    for (double v : t.data) RC_ASSERT(std::isnan(v) || round_to(c.dtype, v) == v);
  }
}

TEST(GenValid, SameSeedAndIndexGiveTheSameCase) {
  const auto g = gen::valid_case(gen::kAllOps);
  for (uint64_t k = 0; k < 50; ++k) {
    EXPECT_EQ(gen::generate(g, 7, k).value(), gen::generate(g, 7, k).value());
  }
  EXPECT_FALSE(gen::generate(g, 7, 1).value() == gen::generate(g, 8, 1).value());
}

// What a set of cases exercises, as named features.
std::set<std::string> features(const Case& c) {
  std::set<std::string> f = {"rank" + std::to_string(spatial_rank(c)), std::string(dtype_name(c.dtype)),
                             "fill." + std::string(fill_name(c.data.fill)), std::string(op_name(c.op))};
  auto window = [&](const Dims& stride, const Dims& dilation, const PadSpec& pad) {
    for (int64_t s : stride) f.insert(s > 1 ? "stride>1" : "stride1");
    for (int64_t d : dilation) f.insert(d > 1 ? "dilation>1" : "dilation1");
    f.insert("pad." + std::string(pad_kind_name(pad.kind)));
    for (const auto& [lo, hi] : pad.pairs)
      f.insert(lo != hi ? "pad.asymmetric" : lo > 0 ? "pad.symmetric" : "pad.zero");
  };
  if (c.tolerance.kind == ToleranceKind::kExact) f.insert("tolerance.exact");
  if (c.data.fill == Fill::kSpecial) {
    f.insert("special." + std::string(op_name(c.op)) + "." + std::string(dtype_name(c.dtype)));
  }
  if (c.tensors.count("x") && op_traits(c).relu) {
    for (double v : c.tensors.at("x").data) {
      if (std::isinf(v)) f.insert("inline_x.fused.inf");
    }
  }
  if (c.tensors.count("x")) f.insert("inline_x");
  if (c.input.channels > 32) f.insert("channels>32");
  if (c.input.batch > 1) f.insert("batch>1");
  if (c.input.batch > 4) f.insert("batch>4");  // past a batch loop unrolled by 4
  if (const auto* p = std::get_if<MaxPoolParams>(&c.op)) {
    window(p->stride, p->dilation, p->padding);
    f.insert({"ceil_mode." + std::to_string(p->ceil_mode), std::string(pool_mode_name(p->mode)),
              "tie." + std::string(tie_rule_name(p->tie))});
    if (p->stride.empty()) f.insert("pool.default_stride");
    return f;
  }
  const ConvParams& p = conv_of(c);
  window(p.stride, p.dilation, p.padding);
  for (int64_t k : p.kernel) {
    if (k > 8) f.insert("kernel>8");  // past a kernel loop unrolled for 8 taps
  }
  f.insert({"mode." + std::string(padding_mode_name(p.padding_mode)), "bias." + std::to_string(p.bias)});
  if (p.groups > 1) f.insert(p.groups == c.input.channels ? "depthwise" : "grouped");
  // Channels on the 8-element vector of a 16-bit dtype, groups 1: what tensor-core kernels
  // (the CUTLASS engine's) take; the usual sizes (at most 4 a group) never are.
  const bool aligned = p.groups == 1 && c.input.channels % 8 == 0 && p.out_channels % 8 == 0;
  if (aligned) f.insert("aligned." + std::string(op_name(c.op)) + "." + std::string(dtype_name(c.dtype)));
  return f;
}

TEST(GenValid, CasesCoverEveryParameter) {
  const std::set<std::string> seen = test::features_seen(gen::valid_case(gen::kAllOps), 3000, features);
  test::expect_every_rank_dtype_and_fill(seen);
  test::expect_seen(seen, {"fill.integer",
                           "fill.ties",
                           "fill.special",
                           "conv",
                           "maxpool",
                           "conv_bias_relu",
                           "stride1",
                           "stride>1",
                           "dilation1",
                           "dilation>1",
                           "pad.explicit",
                           "pad.same",
                           "pad.same_lower",
                           "pad.valid",
                           "pad.asymmetric",
                           "pad.symmetric",
                           "pad.zero",
                           "tolerance.exact",
                           "inline_x",
                           "channels>32",
                           "batch>1",
                           "batch>4",
                           "kernel>8",
                           "ceil_mode.0",
                           "ceil_mode.1",
                           "inference",
                           "training",
                           "tie.first",
                           "tie.last",
                           "tie.any",
                           "pool.default_stride",
                           "mode.zeros",
                           "mode.reflect",
                           "mode.replicate",
                           "mode.circular",
                           "bias.0",
                           "bias.1",
                           "depthwise",
                           "grouped",
                           "inline_x.fused.inf"});
  // NaN, infinities, signed zeros and subnormals reach the convolutions in every dtype
  // (conv_bias_relu's relu(-inf) = 0 is judged as exactly 0).
  for (const char* op : {"conv", "conv_bias_relu"}) {
    for (const char* dtype : {"f64", "f32", "f16", "bf16"}) {
      EXPECT_TRUE(seen.count("special." + std::string(op) + "." + dtype))
          << "no fill: special for " << op << " in " << dtype;
      EXPECT_TRUE(seen.count("aligned." + std::string(op) + "." + dtype))
          << "no channels multiple of 8 for " << op << " in " << dtype;
    }
  }
}

// Shrinks a generated case against `fails` with a generous deadline.
Case shrink(const rc::Gen<Case>& g, uint64_t index, const std::function<bool(const Case&)>& fails) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const gen::ShrinkOutcome out = gen::shrink_case(gen::generate(g, 3, index), fails, deadline);
  EXPECT_FALSE(out.out_of_time);
  return out.smallest;
}

void expect_minimal_window(const Dims& stride, const Dims& dilation, const PadSpec& pad) {
  EXPECT_EQ(stride, Dims{1});
  EXPECT_EQ(dilation, Dims{1});
  EXPECT_EQ(pad.kind, PadKind::kExplicit);
  EXPECT_EQ(pad.pairs, (std::vector<std::array<int64_t, 2>>{{0, 0}}));
}

TEST(GenShrink, EveryFieldShrinksToItsSimplestValue) {
  for (gen::OpSet ops : kOps) {
    for (uint64_t k = 0; k < 8; ++k) {
      const Case c = shrink(gen::valid_case(ops), k, [](const Case&) { return true; });
      SCOPED_TRACE(case_to_one_line(c));
      EXPECT_EQ(c.input, (InputSpec{1, 1, {1}}));
      EXPECT_EQ(c.dtype, DType::kF64);
      EXPECT_EQ(c.data, (DataSpec{0, Fill::kRandom}));
      EXPECT_TRUE(c.tensors.empty());
      EXPECT_EQ(c.tolerance.kind, ToleranceKind::kBound);
      if (const auto* p = std::get_if<MaxPoolParams>(&c.op)) {
        EXPECT_EQ(p->kernel, Dims{1});
        expect_minimal_window(p->stride, p->dilation, p->padding);
        EXPECT_FALSE(p->ceil_mode);
        continue;
      }
      const ConvParams& p = conv_of(c);
      EXPECT_EQ(p.kernel, Dims{1});
      EXPECT_EQ(p.out_channels, 1);
      EXPECT_EQ(p.groups, 1);
      EXPECT_EQ(p.padding_mode, PaddingMode::kZeros);
      expect_minimal_window(p.stride, p.dilation, p.padding);
    }
  }
}

TEST(GenShrink, KeepsWhatTheFailureNeedsAndDropsTheRest) {
  // A "bug" that needs a strided conv with a kernel of at least 3 in some dim: the
  // shrunk case keeps exactly that and nothing else.
  auto fails = [](const Case& c) {
    if (op_traits(c).indices) return false;
    const ConvParams& p = conv_of(c);
    for (size_t i = 0; i < p.kernel.size(); ++i) {
      if (p.kernel[i] >= 3 && !p.stride.empty() && p.stride[i] >= 2) return true;
    }
    return false;
  };
  const auto g = gen::valid_case(gen::only<ConvParams>());
  int shrunk = 0;
  for (uint64_t k = 0; k < 200 && shrunk < 5; ++k) {
    if (!fails(gen::generate(g, 3, k).value())) continue;
    ++shrunk;
    const Case c = shrink(g, k, fails);
    SCOPED_TRACE(case_to_one_line(c));
    const ConvParams& p = conv_of(c);
    EXPECT_EQ(p.kernel, Dims{3});
    EXPECT_EQ(p.stride, Dims{2});
    EXPECT_EQ(p.dilation, Dims{1});
    EXPECT_EQ(c.input.batch, 1);
    EXPECT_EQ(c.input.channels, 1);
    EXPECT_EQ(c.input.spatial, Dims{3});  // the smallest extent a kernel of 3 fits in
    EXPECT_EQ(c.dtype, DType::kF64);
  }
  EXPECT_EQ(shrunk, 5);
}

TEST(GenShrink, StopsAtTheDeadline) {
  const auto past = std::chrono::steady_clock::now();
  int calls = 0;
  const gen::ShrinkOutcome out = gen::shrink_case(
      gen::generate(gen::valid_case(gen::only<ConvParams>()), 3, 1), [&](const Case&) { return ++calls > 0; }, past);
  EXPECT_TRUE(out.out_of_time);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(out.smallest, gen::generate(gen::valid_case(gen::only<ConvParams>()), 3, 1).value());
}

}  // namespace
}  // namespace kc
