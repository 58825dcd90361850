// kcheck bench on one case: the ops it times, the re-check that passes a correct backend
// and fails one that is fast because it is wrong (planted bugs on both the host path and
// a backend's own prepared op), and the stack step per checkpoint policy.
#include "bench/case_bench.h"

#include "bench/judge.h"
#include "support/delegating_backend.h"

#include <gtest/gtest.h>

#include <map>

namespace kc::bench {
namespace {

constexpr BenchOptions kQuick{{0.0, 1, 2, 0}, true, false};

Case conv_case(bool bias, bool fused = false) {
  Case c;
  c.name = "conv";
  c.dtype = DType::kF32;
  c.input = {2, 3, {6, 5}};
  ConvParams p;
  p.out_channels = 4;
  p.kernel = {3, 3};
  p.padding = {PadKind::kSame, {}};
  p.bias = bias || fused;
  if (fused) {
    c.op = ConvBiasReluParams{p};
  } else {
    c.op = p;
  }
  c.data.seed = 17;
  return c;
}

Case pool_case() {
  Case c;
  c.name = "pool";
  c.dtype = DType::kF32;
  c.input = {2, 3, {7, 7}};
  MaxPoolParams p;
  p.kernel = {3, 3};
  p.stride = {2, 2};
  c.op = p;
  c.data.seed = 18;
  return c;
}

std::map<std::string, BenchEntry> by_op(const std::vector<BenchEntry>& v) {
  std::map<std::string, BenchEntry> m;
  for (const BenchEntry& e : v) m[e.op] = e;
  return m;
}

// The reference with one output perturbed after each call: a kernel whose speed would
// mean nothing.
class WrongBackend : public test::DelegatingBackend {
 public:
  WrongBackend() : DelegatingBackend("wrong") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    y[y.size() / 2] += 0.5;
    return ok_status();
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    KC_RETURN_IF_ERROR(reference().maxpool_backward(g, dy, indices, dx));
    dx[0] += 1.0;
    return ok_status();
  }
};

TEST(CaseBench, HostCallsTimeForwardAndTheOneBackwardCall) {
  auto ref = make_reference_as_candidate("cand");
  const auto m = by_op(bench_case(*ref, conv_case(true), "f.yaml", kQuick));
  ASSERT_EQ(m.size(), 2u);
  for (const char* op : {"conv_forward", "conv_backward"}) {
    ASSERT_TRUE(m.count(op)) << op;
    EXPECT_TRUE(m.at(op).error.empty()) << m.at(op).error;
    EXPECT_EQ(m.at(op).recheck, "passed") << op;
    EXPECT_GT(m.at(op).stats.median, 0.0);
    EXPECT_GT(m.at(op).flops, 0.0);
  }
}

TEST(CaseBench, PoolTimesInferenceTrainingAndBackward) {
  auto ref = make_reference_as_candidate("cand");
  const auto m = by_op(bench_case(*ref, pool_case(), "f.yaml", kQuick));
  for (const char* op : {"pool_inference", "pool_training", "pool_backward"}) {
    ASSERT_TRUE(m.count(op)) << op;
    EXPECT_EQ(m.at(op).recheck, "passed") << op << ": " << m.at(op).error;
  }
  EXPECT_GT(m.at("pool_training").held_bytes, m.at("pool_inference").held_bytes);  // the indices
}

TEST(CaseBench, FusedCaseTimesTheFusedPasses) {
  auto ref = make_reference_as_candidate("cand");
  const auto m = by_op(bench_case(*ref, conv_case(true, true), "f.yaml", kQuick));
  EXPECT_TRUE(m.count("fused_forward"));
  EXPECT_TRUE(m.count("fused_backward"));
  EXPECT_EQ(m.at("fused_backward").recheck, "passed");
}

TEST(CaseBench, FastBecauseWrongFailsTheRecheck) {
  WrongBackend wrong;
  const auto conv = by_op(bench_case(wrong, conv_case(false), "f.yaml", kQuick));
  EXPECT_TRUE(conv.at("conv_forward").recheck_failed);
  EXPECT_EQ(conv.at("conv_forward").recheck.rfind("FAILED", 0), 0u) << conv.at("conv_forward").recheck;
  EXPECT_FALSE(conv.at("conv_backward").recheck_failed);
  const auto pool = by_op(bench_case(wrong, pool_case(), "f.yaml", kQuick));
  EXPECT_TRUE(pool.at("pool_backward").recheck_failed);
  EXPECT_FALSE(pool.at("pool_training").recheck_failed);
}

// A backend with its own prepared forward whose timed runs never write y.
class LazyPrepared final : public test::DelegatingBackend {
 public:
  LazyPrepared() : DelegatingBackend("lazy") {}
  StatusOr<std::unique_ptr<PreparedOp>> prepare(const Case& c, BenchOp op, const OpInputs&,
                                                const PrepareOptions&) override {
    if (op != BenchOp::kConvForward) return unimplemented("only the forward");
    struct Op final : PreparedOp {
      PreparedOutputs out;
      Status run() override { return ok_status(); }
      StatusOr<PreparedOutputs> outputs() const override { return out; }
    };
    auto p = std::make_unique<Op>();
    p->out.y = Tensor::zeros(c.dtype, conv_geometry(c)->y_shape());
    return std::unique_ptr<PreparedOp>(std::move(p));
  }
};

TEST(CaseBench, APreparedOpIsRecheckedToo) {
  LazyPrepared lazy;
  const auto m = by_op(bench_case(lazy, conv_case(false), "f.yaml", kQuick));
  EXPECT_TRUE(m.at("conv_forward").recheck_failed);
  EXPECT_FALSE(m.at("conv_backward").recheck_failed);  // its host call, through the fallback
}

// A prepared forward that is right but whose own clock says it took a picosecond: a
// measurement bug the roofline must catch (a fraction of the ceiling above 1).
class LyingClock final : public test::DelegatingBackend {
 public:
  LyingClock() : DelegatingBackend("lying") {}
  StatusOr<std::unique_ptr<PreparedOp>> prepare(const Case& c, BenchOp op, const OpInputs& in,
                                                const PrepareOptions&) override {
    if (op != BenchOp::kConvForward) return unimplemented("only the forward");
    struct Op final : PreparedOp {
      Backend* ref;
      ConvGeometry g;
      OpInputs in;
      PreparedOutputs out;
      Status run() override { return ref->conv_forward(g, in.x, in.w, nullptr, false, out.y); }
      std::optional<double> last_seconds() const override { return 1e-12; }
      StatusOr<PreparedOutputs> outputs() const override { return out; }
    };
    auto p = std::make_unique<Op>();
    p->ref = &reference(), p->g = *conv_geometry(c), p->in = in;
    p->out.y = Tensor::zeros(c.dtype, p->g.y_shape());
    return std::unique_ptr<PreparedOp>(std::move(p));
  }
};

TEST(CaseBench, AClockFasterThanTheHardwareFailsTheRun) {
  LyingClock lying;
  std::vector<BenchEntry> v = bench_case(lying, conv_case(false), "f.yaml", kQuick);
  judge_entries(v, {{"eigen gemm f32", "cpu", true, DType::kF32, 1e12, ""}});
  const auto m = by_op(v);
  EXPECT_EQ(m.at("conv_forward").recheck, "passed");
  EXPECT_TRUE(m.at("conv_forward").fraction_over_one) << m.at("conv_forward").fraction;
  EXPECT_FALSE(m.at("conv_backward").fraction_over_one);
}

TEST(CaseBench, UnsupportedCaseIsOneEntryWithTheReason) {
  struct Refuses final : test::DelegatingBackend {
    Refuses() : DelegatingBackend("refuses") {}
    Status supports(const Case&) const override { return unimplemented("no pools here"); }
  } refuses;
  const std::vector<BenchEntry> v = bench_case(refuses, pool_case(), "f.yaml", kQuick);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].skipped.find("no pools here"), std::string::npos);
  EXPECT_TRUE(v[0].error.empty());
}

TEST(CaseBench, StackStepUnderEachPolicy) {
  Case c;
  c.name = "stack";
  c.dtype = DType::kF32;
  c.input = {1, 2, {8, 8}};
  StackParams s;
  s.depth = 6;
  s.conv.out_channels = 2;
  s.conv.kernel = {3, 3};
  s.conv.padding = {PadKind::kSame, {}};
  s.relu = true;
  c.op = s;
  c.data.seed = 3;
  auto ref = make_reference_as_candidate("cand");
  const auto m = by_op(bench_case(*ref, c, "f.yaml", kQuick));
  ASSERT_TRUE(m.count("stack_step[none]"));
  ASSERT_TRUE(m.count("stack_step[every:2]"));
  ASSERT_TRUE(m.count("stack_step[sqrt]"));
  for (const auto& [op, e] : m) EXPECT_EQ(e.recheck, "passed") << op << ": " << e.error;
  EXPECT_LT(m.at("stack_step[every:2]").activation_peak_bytes, m.at("stack_step[none]").activation_peak_bytes);
  EXPECT_EQ(m.at("stack_step[none]").recomputations, 0);
  EXPECT_GT(m.at("stack_step[sqrt]").recomputations, 0);
}

}  // namespace
}  // namespace kc::bench
