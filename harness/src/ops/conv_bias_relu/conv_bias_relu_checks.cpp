// The conv_bias_relu module's part of the checks: the state check changes its conv's
// fields (its geometry's checks are the conv's, ops/conv/conv_checks.cpp).
#include "checks/shape_mutations.h"
#include "ops/op_module.h"

namespace kc::checks {

void add_shape_mutations(std::vector<ShapeMutation>& m, const ConvBiasReluParams& p) {
  add_conv_mutations(m, p.conv, [](Case& v) -> ConvParams& { return std::get<ConvBiasReluParams>(v.op).conv; });
}

}  // namespace kc::checks
