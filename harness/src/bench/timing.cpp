#include "bench/timing.h"

#include <chrono>

#include "core/fp_env.h"

namespace kc::bench {
namespace {

using Clock = std::chrono::steady_clock;

StatusOr<double> one_run(PreparedOp& op) {
  const Clock::time_point start = Clock::now();
  KC_RETURN_IF_ERROR(op.run());
  KC_RETURN_IF_ERROR(op.synchronize());
  const double host = std::chrono::duration<double>(Clock::now() - start).count();
  return op.last_seconds().value_or(host);
}

}  // namespace

StatusOr<Timing> time_runs(std::span<PreparedOp* const> ops, const TimingBudget& budget) {
  if (ops.empty()) return invalid_argument("time_runs: no prepared op");
  // The timed outputs are re-checked against the oracle next: whatever the ops did to the
  // floating-point environment does not outlive the timing.
  struct Pin {
    ~Pin() { pin_judge_fp_env(); }
  } pin;
  for (int i = 0; i < budget.warmup; ++i) {
    for (PreparedOp* op : ops) KC_RETURN_IF_ERROR(one_run(*op).status());
  }
  Timing t;
  double total = 0.0;
  for (size_t r = 0;; ++r) {
    const int reps = static_cast<int>(t.samples.size());
    if (reps >= budget.max_reps) break;
    if (reps >= budget.min_reps && total >= budget.min_seconds) break;
    if (reps >= 1 && total >= budget.max_seconds) break;
    KC_ASSIGN_OR_RETURN(const double s, one_run(*ops[r % ops.size()]));
    t.samples.push_back(s);
    total += s;
  }
  t.stats = summarize(t.samples);
  return t;
}

}  // namespace kc::bench
