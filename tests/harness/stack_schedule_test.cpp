// The checkpoint schedule (stack_schedule.h) as a backend's resident runner runs it:
// run_stack() hands the stack to a ResidentStackRunner, a runtime whose values are
// move-only buffers with counted bytes (as device buffers are) gets the executor's
// gradients and bookkeeping, and the checkpoint check judges the memory it measured:
// a runner that never gives freed activations back saves nothing and is caught.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "support/delegating_backend.h"
#include "kc/case_io.h"
#include "kc/invoke.h"
#include "kc/runner.h"
#include "kc/stack_exec.h"
#include "kc/stack_schedule.h"

namespace kc {
namespace {

struct Counter {
  int64_t current = 0, peak = 0;
  bool leak = false;  // freed bytes stay counted
  void add(int64_t b) {
    current += b;
    peak = std::max(peak, current);
  }
};

// A tensor whose bytes are counted while it lives; move-only, like a device buffer.
class Counted {
 public:
  Counted() = default;
  Counted(Tensor t, Counter* c) : t_(std::move(t)), c_(c) { c_->add(bytes()); }
  Counted(Counted&& o) noexcept : t_(std::move(o.t_)), c_(std::exchange(o.c_, nullptr)) {}
  Counted& operator=(Counted&& o) noexcept {
    if (this != &o) {
      release();
      t_ = std::move(o.t_);
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  ~Counted() { release(); }
  const Tensor& tensor() const { return t_; }

 private:
  int64_t bytes() const { return t_.size() * static_cast<int64_t>(storage_bytes(t_.dtype)); }
  void release() {
    if (c_ != nullptr && !c_->leak) c_->current -= bytes();
    c_ = nullptr;
  }
  Tensor t_;
  Counter* c_ = nullptr;
};

// The reference's per-layer calls on counted buffers (f64 cases).
class CountedRuntime {
 public:
  using Value = Counted;
  using Indices = IndexTensor;
  CountedRuntime(Backend& ref, const std::vector<StackLayer>& layers, const StackInputs& in, StackRun& run,
                 Counter& counter)
      : ref_(ref), layers_(layers), in_(in), run_(run), counter_(counter) {
    run_.dw.resize(layers.size());
    run_.db.resize(layers.size());
  }
  Counted make(Tensor t) { return Counted(std::move(t), &counter_); }

  Status forward(size_t l, const Counted& x, Counted& y, std::optional<IndexTensor>* keep) {
    const StackLayer& L = layers_[l];
    Tensor z = poisoned(DType::kF64, L.conv.y_shape());
    KC_RETURN_IF_ERROR(ref_.conv_forward(L.conv, x.tensor(), in_.w[l], bias(l), L.relu, z));
    if (!L.pool) {
      y = make(std::move(z));
      return ok_status();
    }
    Tensor out = poisoned(DType::kF64, L.pool->y_shape());
    IndexTensor idx{L.pool->y_shape(), std::vector<int64_t>(static_cast<size_t>(out.size()), kPoisonIndex)};
    KC_RETURN_IF_ERROR(ref_.maxpool_forward(*L.pool, z, out, &idx));
    if (keep != nullptr) *keep = std::move(idx);
    y = make(std::move(out));
    return ok_status();
  }
  void output(size_t, const Counted&) {}
  Status backward(size_t l, const Counted& x, const IndexTensor* argmax, const Counted& dy, Counted& dx) {
    const StackLayer& L = layers_[l];
    Tensor dz = dy.tensor();
    if (L.pool) {
      dz = poisoned(DType::kF64, L.conv.y_shape());
      KC_RETURN_IF_ERROR(ref_.maxpool_backward(*L.pool, dy.tensor(), argmax, dz));
    }
    Tensor g = poisoned(DType::kF64, L.conv.x_shape()), dw = poisoned(DType::kF64, L.conv.w_shape());
    Tensor db = L.conv.bias ? poisoned(DType::kF64, L.conv.b_shape()) : Tensor{};
    KC_RETURN_IF_ERROR(ref_.conv_backward(L.conv, x.tensor(), in_.w[l], bias(l), L.relu, dz, g, dw,
                                          L.conv.bias ? &db : nullptr));
    run_.dw[l] = std::move(dw);
    if (L.user_bias) run_.db[l] = std::move(db);
    dx = make(std::move(g));
    return ok_status();
  }

 private:
  const Tensor* bias(size_t l) const { return layers_[l].conv.bias ? &in_.b[l] : nullptr; }
  Backend& ref_;
  const std::vector<StackLayer>& layers_;
  const StackInputs& in_;
  StackRun& run_;
  Counter& counter_;
};

class CountedRunner final : public test::DelegatingBackend, public ResidentStackRunner {
 public:
  CountedRunner(std::string name, bool leak) : DelegatingBackend(std::move(name)), leak_(leak) {}
  StackRun run_stack_resident(const std::vector<StackLayer>& layers, const StackInputs& in,
                              const StackRunOptions& options) override {
    StackRun run;
    Counter counter;
    counter.leak = leak_;
    CountedRuntime rt(reference(), layers, in, run, counter);
    StackSchedule<CountedRuntime> schedule(rt, layers, options, run);
    Counted y, g = rt.make(in.dy);
    counter = Counter{0, 0, leak_};  // the incoming cotangent is not the step's
    run.status = schedule.run(rt.make(in.x), y, g);
    run.y = y.tensor();
    run.dx = g.tensor();
    run.measured_peak_bytes = counter.peak;
    return run;
  }

 private:
  bool leak_;
};

Case deep_case(const char* checkpoint) {
  auto cases = parse_cases(std::string("{op: stack, dtype: f64, input: {batch: 1, channels: 2, spatial: [12, 12]}, "
                                       "stack: {depth: 9, layer: {conv: {out_channels: 2, kernel: [3, 3], padding: "
                                       "same, bias: true}, relu: true}, checkpoint: ") +
                               checkpoint + "}, data: {seed: 5}, deterministic: true}",
                           "schedule.yaml");
  EXPECT_EQ(cases.size(), 1u);
  return *cases.at(0).c;
}

const CheckResult* find_check(const CaseResult& r, std::string_view name) {
  for (const CheckResult& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(StackSchedule, ResidentRunnerGetsTheExecutorsGradientsAndBookkeeping) {
  const Case c = deep_case("sqrt");
  auto layers = stack_layers(c);
  ASSERT_TRUE(layers.ok());
  auto in = make_stack_inputs(c, *layers);
  ASSERT_TRUE(in.ok());
  auto ref = make_reference_backend();
  CountedRunner counted("counted", false);
  const StackRunOptions opt{CheckpointPolicy{CheckpointKind::kSqrt, 0}, DType::kF64};
  const StackRun host = run_stack(*ref, *layers, *in, opt);
  const StackRun resident = run_stack(counted, *layers, *in, opt);
  ASSERT_TRUE(host.status.ok() && resident.status.ok()) << resident.status.to_string();
  EXPECT_EQ(host.measured_peak_bytes, -1);
  EXPECT_GE(resident.measured_peak_bytes, resident.peak_bytes);  // its records are counted buffers
  EXPECT_EQ(resident.recomputations, host.recomputations);
  EXPECT_EQ(resident.peak_bytes, host.peak_bytes);
  EXPECT_TRUE(bitwise_equal(resident.y, host.y));
  EXPECT_TRUE(bitwise_equal(resident.dx, host.dx));
  for (size_t l = 0; l < host.dw.size(); ++l) {
    EXPECT_TRUE(bitwise_equal(resident.dw[l], host.dw[l])) << l;
    EXPECT_TRUE(bitwise_equal(resident.db[l], host.db[l])) << l;
  }
}

TEST(StackSchedule, CheckpointJudgesMeasuredMemoryAndCatchesALeak) {
  const Case c = deep_case("none");
  CountedRunner good("counted", false), leaky("leaky", true);
  const CheckResult* ok = nullptr;
  const CaseResult r_good = check_case(c, good);
  ok = find_check(r_good, "checkpoint");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->disposition, Disposition::kPassed) << ok->message;
  EXPECT_NE(ok->message.find("measured saving of sqrt"), std::string::npos) << ok->message;
  const CaseResult r_leak = check_case(c, leaky);
  const CheckResult* bad = find_check(r_leak, "checkpoint");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->disposition, Disposition::kFailed) << bad->message;
  EXPECT_NE(bad->message.find("sqrt saved no measured memory"), std::string::npos) << bad->message;
}

}  // namespace
}  // namespace kc
