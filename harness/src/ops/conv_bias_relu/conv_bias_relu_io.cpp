// The conv_bias_relu module's YAML: a conv's section whose bias is always there.
#include "ops/conv/conv_io.h"

#include "io/params_yaml.h"
#include "ops/op_module.h"

namespace kc::io {

StatusOr<OpParams> read_params(const Value& v, size_t rank, const ConvBiasReluParams&) {
  KC_ASSIGN_OR_RETURN(ConvParams conv, read_conv_fields(v, rank, true));
  return OpParams(ConvBiasReluParams{std::move(conv)});
}

std::string params_flow(const ConvBiasReluParams& p) { return conv_flow(p.conv); }

}  // namespace kc::io
