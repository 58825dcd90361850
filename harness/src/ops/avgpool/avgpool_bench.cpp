// The average pool module's part of kcheck bench: its forward and backward timed, each
// a host call of its own.
#include "bench/case_bench.h"
#include "bench/host_prepared.h"
#include "ops/op_module.h"

namespace kc::bench {

std::vector<OpPlan> bench_plans(const AvgPoolParams&) {
  return {{BenchOp::kAvgPoolForward, "avgpool_forward"}, {BenchOp::kAvgPoolBackward, "avgpool_backward"}};
}

std::string_view bench_kind(const AvgPoolGeometry&) { return "avgpool "; }

HostFit host_fit(const AvgPoolGeometry&, BenchOp op) {
  const bool avg_op = op == BenchOp::kAvgPoolForward || op == BenchOp::kAvgPoolBackward;
  return avg_op ? HostFit::kRuns : HostFit::kNotOfCase;
}

Status host_allocate(const AvgPoolGeometry& g, BenchOp op, Backend&, const OpInputs&, DType dtype,
                     PreparedOutputs& out) {
  if (op == BenchOp::kAvgPoolForward) out.y = Tensor::zeros(dtype, g.y_shape());
  if (op == BenchOp::kAvgPoolBackward) out.dx = Tensor::zeros(dtype, g.x_shape());
  return ok_status();
}

Status host_run(const AvgPoolGeometry& g, BenchOp op, bool, Backend& be, const OpInputs& in, PreparedOutputs& out) {
  if (op == BenchOp::kAvgPoolForward) return be.avgpool_forward(g, in.x, out.y);
  return be.avgpool_backward(g, in.dy, out.dx);
}

}  // namespace kc::bench
