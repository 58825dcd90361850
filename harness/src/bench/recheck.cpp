#include "bench/recheck.h"

#include "checks/check_list.h"

namespace kc::bench {
namespace {

// The candidate's outputs as the checks read them: what the op wrote, the oracle's
// values for the tensors it does not write.
OpOutputs candidate(const OpOutputs& ref, BenchOp op, const PreparedOutputs& got) {
  OpOutputs cand = ref;
  cand.forward = ok_status();
  cand.backward = ok_status();
  cand.ran_backward = !bench_op_forward(op);
  if (bench_op_forward(op)) {
    cand.y = got.y;
    cand.indices = got.indices;
    return cand;
  }
  if (op == BenchOp::kPoolBackward) cand.indices = got.indices;
  if (got.dx.size() > 0) cand.dx = got.dx;
  if (got.dw.size() > 0) cand.dw = got.dw;
  if (got.db.size() > 0) cand.db = got.db;
  return cand;
}

}  // namespace

Recheck recheck_outputs(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref,
                        const OpOutputs& abs, BenchOp op, const PreparedOutputs& got) {
  OpOutputs oracle = ref;
  if (op == BenchOp::kPoolInference) oracle.indices.reset();  // the op keeps none
  const OpOutputs cand = candidate(oracle, op, got);
  const bool is_reference = backend.name() == "reference";
  // As the runner builds it (run/runner.cpp), so that a bench entry is judged as kcheck
  // run judges the same case.
  const NonfinitePasses passes = nonfinite_passes(c, g, in, ref);
  CheckContext ctx{c, g, in, backend, is_reference, oracle, abs, cand};
  with_nonfinite_passes(ctx, passes);
  const CheckResult r = bench_op_forward(op) ? checks::forward_run(ctx) : checks::backward_run(ctx);
  Recheck out;
  if (r.disposition == Disposition::kFailed) {
    out.failed = true;
    out.text = "FAILED: " + r.message;
  } else if (r.disposition == Disposition::kMistrusted) {
    out.text = "mistrusted: " + r.message;
  }
  return out;
}

}  // namespace kc::bench
