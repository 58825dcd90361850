// The conv_bias_relu module's part of kcheck bench: the fused forward and backward, each
// one host call (its geometry's host calls are the conv's).
#include "bench/case_bench.h"
#include "ops/op_module.h"

namespace kc::bench {

std::vector<OpPlan> bench_plans(const ConvBiasReluParams&) {
  return {{BenchOp::kConvForward, "fused_forward"}, {BenchOp::kConvBackward, "fused_backward"}};
}

}  // namespace kc::bench
