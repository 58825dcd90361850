// checkpoint (op: stack): the backend's gradients under checkpointing equal those without
// (bitwise for the oracle and for a case that says deterministic: true, else within the
// allowance for sums in another order), the recomputation count is the plan's, and the
// peak of activation bytes is the plan's and inside the policy's bound. A case with
// policy none is compared with sqrt.
// More on the method: docs/notes.md, section harness/src/stack/checkpoint.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "checks/check_list.h"
#include "checks/common.h"
#include "stack/stack_exec.h"

namespace kc::checks {
namespace {

// "" when every gradient is bitwise equal, else the first that differs.
std::string first_difference(const StackRun& a, const StackRun& b) {
  if (!bitwise_equal(a.dx, b.dx)) return "dx";
  for (size_t l = 0; l < a.dw.size() && l < b.dw.size(); ++l) {
    if (!bitwise_equal(a.dw[l], b.dw[l])) return "dw of layer " + std::to_string(l + 1);
    if (!bitwise_equal(a.db[l], b.db[l])) return "db of layer " + std::to_string(l + 1);
  }
  return {};
}

// One policy's run against its plan.
struct Planned {
  std::string name;  // the policy's
  CheckpointPlan plan;
  const StackRun& run;
};

void check_bookkeeping(const CheckContext& ctx, const Planned& p, CheckResult& r) {
  const std::string& name = p.name;
  const CheckpointPlan& plan = p.plan;
  const StackRun& run = p.run;
  r.message += name + ": " + std::to_string(run.recomputations) + " recomputed layer forwards, peak " +
               std::to_string(run.peak_bytes) + " activation bytes (bound " + std::to_string(plan.bound_bytes) + "); ";
  if (run.recomputations != plan.recomputations) {
    r.disposition = Disposition::kFailed;
    r.message += name + " recomputed " + std::to_string(run.recomputations) + " layer forwards, the plan says " +
                 std::to_string(plan.recomputations) + "; ";
  }
  if (run.peak_bytes != plan.peak_bytes || run.peak_bytes > plan.bound_bytes) {
    r.disposition = Disposition::kFailed;
    r.message += name + " held " + std::to_string(run.peak_bytes) + " activation bytes at its peak, the plan says " +
                 std::to_string(plan.peak_bytes) + " within a bound of " + std::to_string(plan.bound_bytes) + "; ";
  }
  if (run.measured_peak_bytes < 0) return;
  r.message += name + " measured " + std::to_string(run.measured_peak_bytes) + " bytes of device memory at its peak; ";
  if (!has_max_pool(ctx.stack->layers) && run.measured_peak_bytes < plan.peak_bytes) {
    r.disposition = Disposition::kFailed;
    r.message += name + " measured less memory than the activations it holds at once (" +
                 std::to_string(plan.peak_bytes) + " bytes): the measurement misses them; ";
  }
}

// The most bytes one layer's backward holds beyond the activation records: its incoming
// cotangent, the pool's dz, dx, dw and db, in the case dtype.
int64_t in_flight_bytes(const std::vector<StackLayer>& layers, DType dtype) {
  int64_t most = 0;
  for (const StackLayer& l : layers) {
    const int64_t elements = element_count(l.out_shape()) + (l.pool ? element_count(l.conv.y_shape()) : 0) +
                             element_count(l.in_shape()) + element_count(l.conv.w_shape()) +
                             (l.conv.bias ? element_count(l.conv.b_shape()) : 0);
    most = std::max(most, elements * static_cast<int64_t>(storage_bytes(dtype)));
  }
  return most;
}

// A resident runner's measured memory: checkpointing must save some where the plan
// saves. Its peak is the activations held plus the gradients in flight at that moment,
// and the two policies peak at different moments, so the measured saving may fall short
// of the plan's by up to one layer's gradients in flight (a tiny stack may show none, or
// a small loss); a runner that keeps freed activations falls short by more.
void check_measured_saving(const std::vector<StackLayer>& layers, DType dtype, const Planned& plain,
                           const Planned& kept, CheckResult& r) {
  if (plain.run.measured_peak_bytes < 0 || kept.run.measured_peak_bytes < 0) return;
  const int64_t planned = plain.plan.peak_bytes - kept.plan.peak_bytes;
  const int64_t measured = plain.run.measured_peak_bytes - kept.run.measured_peak_bytes;
  const int64_t flight = in_flight_bytes(layers, dtype);
  r.message += "measured saving of " + kept.name + " " + std::to_string(measured) + " bytes (the plan's " +
               std::to_string(planned) + ", less at most " + std::to_string(flight) +
               " bytes of one layer's gradients in flight); ";
  if (planned > 0 && measured <= 0 && measured < planned - flight) {
    r.disposition = Disposition::kFailed;
    r.message += kept.name + " saved no measured memory where the plan saves " + std::to_string(planned) +
                 " bytes: freed activations are still held; ";
  }
}

// A difference within the allowance `apart` was judged by ("" from it) is reported,
// saying what the allowance covers (`within`); beyond it, FAILED with where.
void judge_order_noise(const std::string& what, const std::string& apart, const char* within, CheckResult& r) {
  if (apart.empty()) {
    r.message += "gradients with " + what + ", by no more than " + within;
    return;
  }
  r.disposition = Disposition::kFailed;
  r.message += "gradients with " + what + ", beyond the noise of sums in another order: " + apart;
}

// The policies' gradients differ (`what` says where). Required bitwise (the oracle,
// deterministic: true): FAILED. Otherwise (deterministic: false), where backward's
// allowance for sums in another order holds (f32 and f64 stacks whose routing the oracle
// forces), they must be within twice it, race or not: two agreeing runs prove no
// determinism (atomics may add in one order in two runs and in another after a different
// schedule), and a race must not hide a wrong recomputation. In f16/bf16, whose
// allowance outgrows the gradients, a difference in dw or db alone (dx bitwise equal) is
// judged by the accumulation's order allowance plus one rounding to storage; any other
// is reported only when two runs without checkpointing differ too.
void judge_difference(const CheckContext& ctx, const StackRun& plain, const StackRun& kept, const std::string& what,
                      CheckResult& r) {
  if (ctx.is_reference || ctx.c.deterministic) {
    r.disposition = Disposition::kFailed;
    r.message += "gradients with " + what + " (a deterministic backend must recompute the same values)";
    return;
  }
  if (stack_backward_not_applicable(ctx).empty()) {
    return judge_order_noise(what, stack_runs_apart(ctx, plain, kept),
                             "sums in another order make (deterministic: false, so reported, not failed; "
                             "deterministic: true requires them bitwise equal)",
                             r);
  }
  // f16/bf16: with dx bitwise equal both runs routed the gradient alike, so the weight
  // gradients can differ only by their sums' order (atomic adds that follow the schedule)
  // and the one rounding to storage that follows; a wrong recomputation moves dx too.
  if (bitwise_equal(plain.dx, kept.dx)) {
    return judge_order_noise(what, stack_weight_grads_apart(ctx, plain, kept),
                             "sums in another order and one rounding to the dtype make, with dx bitwise equal "
                             "(deterministic: false, so reported, not failed)",
                             r);
  }
  const StackRun again =
      run_stack(ctx.backend, ctx.stack->layers, ctx.stack->in, {CheckpointPolicy{}, ctx.c.dtype, true, false});
  const std::string race = first_difference(plain, again);
  if (!race.empty()) {
    r.message += "gradients with " + what + ", but so do two runs without checkpointing (" + race +
                 "): the backend is nondeterministic (deterministic: false, so reported, not failed)";
    return;
  }
  r.disposition = Disposition::kFailed;
  r.message += "gradients with " + what + ", and two runs without checkpointing agree";
}

}  // namespace

CheckResult checkpoint_run(const CheckContext& ctx) {
  CheckResult r = make_result("checkpoint", Disposition::kPassed);
  const StackContext& s = *ctx.stack;
  CheckpointPolicy policy = std::get<StackParams>(ctx.c.op).checkpoint;
  if (policy.kind == CheckpointKind::kNone) policy = {CheckpointKind::kSqrt, 0};
  const StackRun plain = run_stack(ctx.backend, s.layers, s.in, {CheckpointPolicy{}, ctx.c.dtype, true, false});
  const StackRun kept = run_stack(ctx.backend, s.layers, s.in, {policy, ctx.c.dtype, true, false});
  if (!plain.status.ok()) return call_failed("checkpoint", "the stack without checkpointing", plain.status);
  if (!kept.status.ok()) return call_failed("checkpoint", "the stack with " + checkpoint_name(policy), kept.status);
  const Planned plain_planned{checkpoint_name(CheckpointPolicy{}),
                              plan_checkpoints(s.layers, CheckpointPolicy{}, ctx.c.dtype), plain};
  const Planned kept_planned{checkpoint_name(policy), plan_checkpoints(s.layers, policy, ctx.c.dtype), kept};
  check_bookkeeping(ctx, plain_planned, r);
  check_bookkeeping(ctx, kept_planned, r);
  check_measured_saving(s.layers, ctx.c.dtype, plain_planned, kept_planned, r);
  const std::string diff = first_difference(plain, kept);
  if (diff.empty()) {
    r.message += "gradients with " + checkpoint_name(policy) + " bitwise equal to those without";
    return r;
  }
  judge_difference(ctx, plain, kept,
                   checkpoint_name(policy) + " are not bitwise equal to those without: " + diff + " differs", r);
  return r;
}

}  // namespace kc::checks
