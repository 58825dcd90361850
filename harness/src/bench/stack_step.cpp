#include "bench/stack_step.h"

#include <cmath>

#include "bench/op_cost.h"
#include "bench/rss.h"
#include "stack/stack_exec.h"

namespace kc::bench {
namespace {

// One training step as a prepared op, so that the timing loop is the ops' own.
class StackStep final : public PreparedOp {
 public:
  StackStep(Backend& be, const std::vector<StackLayer>& layers, const StackInputs& in, StackRunOptions o)
      : be_(be), layers_(layers), in_(in), o_(o) {}
  Status run() override {
    run_ = run_stack(be_, layers_, in_, o_);
    return run_.status;
  }
  StatusOr<PreparedOutputs> outputs() const override { return PreparedOutputs{}; }
  const StackRun& last() const { return run_; }

 private:
  Backend& be_;
  const std::vector<StackLayer>& layers_;
  const StackInputs& in_;
  StackRunOptions o_;
  StackRun run_;
};

std::string policy_label(const CheckpointPolicy& p) {
  if (p.kind == CheckpointKind::kNone) return "none";
  if (p.kind == CheckpointKind::kSqrt) return "sqrt";
  return "every:" + std::to_string(p.every);
}

bool same_gradients(const StackRun& a, const StackRun& b) {
  if (!bitwise_equal(a.dx, b.dx) || a.dw.size() != b.dw.size()) return false;
  for (size_t l = 0; l < a.dw.size(); ++l) {
    if (!bitwise_equal(a.dw[l], b.dw[l])) return false;
  }
  return true;
}

double step_flops(const std::vector<StackLayer>& layers, DType dtype, int64_t recomputed) {
  double total = 0.0, forward = 0.0;
  for (const StackLayer& l : layers) {
    const double f = op_cost(OpGeometry{l.conv}, dtype, BenchOp::kConvForward).flops;
    forward += f;
    total += 3 * f;  // forward, backward data, backward weight
  }
  return total + static_cast<double>(recomputed) * forward / static_cast<double>(layers.size());
}

}  // namespace

std::vector<BenchEntry> bench_stack(Backend& backend, const Case& c, const std::string& file,
                                    const BenchOptions& options) {
  BenchEntry base;
  base.case_name = c.name;
  base.file = file;
  base.backend = backend.name();
  base.mode = "warm";
  base.dtype = c.dtype;
  base.compute = compute_dtype(backend, c);
  StatusOr<std::vector<StackLayer>> layers = stack_layers(c);
  StatusOr<StackInputs> in = layers.ok() ? make_stack_inputs(c, *layers) : StatusOr<StackInputs>(layers.status());
  if (!in.ok() || !layers.ok()) {
    base.op = "stack_step";
    base.error = "inputs: " + in.status().to_string();
    return {base};
  }
  if (Status s = stack_supports(backend, *layers); !s.ok()) {
    base.op = "stack_step";
    base.mode = "-";
    base.skipped = s.message();
    return {base};
  }
  const int64_t depth = static_cast<int64_t>(layers->size());
  const auto& sp = std::get<StackParams>(c.op);
  const int64_t k = sp.checkpoint.kind == CheckpointKind::kEvery ? sp.checkpoint.every : std::min<int64_t>(2, depth);
  std::vector<BenchEntry> out;
  StackRun plain;
  bool comparable = false;  // plain ran and repeats itself bitwise
  for (const CheckpointPolicy p :
       {CheckpointPolicy{}, CheckpointPolicy{CheckpointKind::kEvery, k}, CheckpointPolicy{CheckpointKind::kSqrt, 0}}) {
    BenchEntry e = base;
    e.op = "stack_step[" + policy_label(p) + "]";
    reset_peak_rss();
    const int64_t rss_before = current_rss_bytes();
    StackStep step(backend, *layers, *in, {p, c.dtype, true, false, false});
    PreparedOp* ops[] = {&step};
    StatusOr<Timing> t = time_runs(ops, options.budget);
    if (!t.ok()) {
      e.error = "run: " + t.status().to_string();
      out.push_back(e);
      continue;
    }
    const StackRun& run = step.last();
    e.stats = t->stats;
    e.flops = step_flops(*layers, c.dtype, run.recomputations);
    e.recomputations = static_cast<double>(run.recomputations);
    e.activation_peak_bytes =
        static_cast<double>(run.measured_peak_bytes >= 0 ? run.measured_peak_bytes : run.peak_bytes);
    e.held_bytes = static_cast<int64_t>(e.activation_peak_bytes);
    if (const int64_t peak = peak_rss_bytes(); peak >= 0 && rss_before >= 0) e.rss_peak_bytes = peak - rss_before;
    if (p.kind == CheckpointKind::kNone) {
      plain = run;
      StackRun again = run_stack(backend, *layers, *in, {p, c.dtype, true, false, false});
      comparable = same_gradients(plain, again);
      if (!comparable) e.recheck = "mistrusted: two runs without checkpointing differ";
    } else if (!comparable) {
      e.recheck = "mistrusted: no bitwise run without checkpointing to compare with";
    } else if (!same_gradients(plain, run)) {
      e.recheck = "FAILED: gradients differ from the run without checkpointing";
      e.recheck_failed = true;
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace kc::bench
