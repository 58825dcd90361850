// The conv_bias_relu op's module in kc_core (docs/ops.md, "conv + bias + relu"): a
// conv with a bias, validated by the conv's rules under its own name, and relu, which
// takes the adjoint identity away.
#include <string>

#include "ops/op_module.h"

namespace kc {

OpTraits op_traits(const ConvBiasReluParams&) { return {.relu = true}; }

InputShapes input_shapes(const Case& c, const ConvBiasReluParams& p) { return input_shapes(c, p.conv); }

Status validate_op(const Case& c, const ConvBiasReluParams& p, const Limits& limits) {
  return validate_op(c, p.conv, limits);
}

std::string never_applies(const Case& c, const ConvBiasReluParams& p, std::string_view check) {
  if (check == "adjoint")
    return "relu makes conv_bias_relu nonlinear, so it has no adjoint identity (run it on plain conv)";
  return never_applies(c, p.conv, check);
}

std::vector<MemoryPart> memory_parts(const Case& c, const ConvBiasReluParams& p, const std::string& f,
                                     const Cause& input) {
  return memory_parts(c, p.conv, f, input);
}

OpWork op_work(const Case& c, const ConvBiasReluParams& p) { return op_work(c, p.conv); }

const PadSpec& op_padding(const ConvBiasReluParams& p) { return p.conv.padding; }

StatusOr<OpGeometry> geometry_of(const Case& c, const ConvBiasReluParams&) {
  KC_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(c));
  return OpGeometry{g};
}

void drop_padding(ConvBiasReluParams& p) { drop_padding(p.conv); }

}  // namespace kc
