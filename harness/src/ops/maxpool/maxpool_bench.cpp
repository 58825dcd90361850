// The max pool module's part of kcheck bench: inference, training (with indices) and
// backward timed; a backward's indices come from one training forward of the same
// backend, made when the op is prepared.
#include "bench/case_bench.h"
#include "bench/host_prepared.h"
#include "ops/op_module.h"

namespace kc::bench {

std::vector<OpPlan> bench_plans(const MaxPoolParams&) {
  return {{BenchOp::kPoolInference, "pool_inference"},
          {BenchOp::kPoolTraining, "pool_training"},
          {BenchOp::kPoolBackward, "pool_backward"}};
}

std::string_view bench_kind(const PoolGeometry&) { return "pool "; }

HostFit host_fit(const PoolGeometry&, BenchOp op) {
  const bool pool_op = op == BenchOp::kPoolInference || op == BenchOp::kPoolTraining || op == BenchOp::kPoolBackward;
  return pool_op ? HostFit::kRuns : HostFit::kNotOfCase;
}

Status host_allocate(const PoolGeometry& g, BenchOp op, Backend& be, const OpInputs& in, DType dtype,
                     PreparedOutputs& out) {
  out.y = Tensor::zeros(dtype, g.y_shape());
  const size_t n = static_cast<size_t>(element_count(g.y_shape()));
  if (op != BenchOp::kPoolInference) out.indices = IndexTensor{g.y_shape(), HostVector<int64_t>(n)};
  if (op != BenchOp::kPoolBackward) return ok_status();
  out.dx = Tensor::zeros(dtype, g.x_shape());
  return be.maxpool_forward(g, in.x, out.y, &*out.indices);  // the indices dx is routed by
}

Status host_run(const PoolGeometry& g, BenchOp op, bool, Backend& be, const OpInputs& in, PreparedOutputs& out) {
  if (op == BenchOp::kPoolInference) return be.maxpool_forward(g, in.x, out.y, nullptr);
  if (op == BenchOp::kPoolTraining) return be.maxpool_forward(g, in.x, out.y, &*out.indices);
  return be.maxpool_backward(g, in.dy, &*out.indices, out.dx);
}

}  // namespace kc::bench
