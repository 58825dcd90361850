// The conv module's part of kcheck bench (conv_bias_relu's too: one geometry): the ops
// timed (the split backward: data, weight, bias, and the atomic weight gradient), and
// what its host calls run (forward; dx, dw and db in one call).
#include "bench/case_bench.h"
#include "bench/host_prepared.h"
#include "ops/op_module.h"

namespace kc::bench {

std::vector<OpPlan> bench_plans(const ConvParams& p) {
  const bool bias = p.bias;
  std::vector<OpPlan> ops = {{BenchOp::kConvForward, "conv_forward"},
                             {BenchOp::kConvBackwardData, "conv_backward_data"},
                             {BenchOp::kConvBackwardWeight, "conv_backward_weight"}};
  if (bias) ops.push_back({BenchOp::kConvBackwardBias, "conv_backward_bias"});
  ops.push_back({BenchOp::kConvBackwardWeight, "conv_backward_weight_atomic", false});
  return ops;
}

std::string_view bench_kind(const ConvGeometry&) { return "conv "; }

HostFit host_fit(const ConvGeometry&, BenchOp op) {
  switch (op) {
    case BenchOp::kConvForward:
    case BenchOp::kConvBackward:
      return HostFit::kRuns;
    case BenchOp::kConvBackwardData:
    case BenchOp::kConvBackwardWeight:
    case BenchOp::kConvBackwardBias:
      return HostFit::kNotAlone;
    default:
      return HostFit::kNotOfCase;
  }
}

Status host_allocate(const ConvGeometry& g, BenchOp op, Backend&, const OpInputs&, DType dtype, PreparedOutputs& out) {
  if (op == BenchOp::kConvForward) {
    out.y = Tensor::zeros(dtype, g.y_shape());
    return ok_status();
  }
  out.dx = Tensor::zeros(dtype, g.x_shape());
  out.dw = Tensor::zeros(dtype, g.w_shape());
  if (g.bias) out.db = Tensor::zeros(dtype, g.b_shape());
  return ok_status();
}

Status host_run(const ConvGeometry& g, BenchOp op, bool relu, Backend& be, const OpInputs& in, PreparedOutputs& out) {
  const Tensor* b = g.bias ? &in.b : nullptr;
  if (op == BenchOp::kConvForward) return be.conv_forward(g, in.x, in.w, b, relu, out.y);
  return be.conv_backward(g, in.x, in.w, b, relu, in.dy, out.dx, out.dw, g.bias ? &out.db : nullptr);
}

}  // namespace kc::bench
