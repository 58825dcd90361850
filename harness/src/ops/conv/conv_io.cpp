// The conv module's YAML (docs/cases.md, "conv"): its section read into ConvParams
// (shape rules are validate()'s) and written back as one flow map.
#include "ops/conv/conv_io.h"

#include "io/params_yaml.h"
#include "ops/op_module.h"

namespace kc::io {

StatusOr<ConvParams> read_conv_fields(const Value& v, size_t rank, bool fused) {
  KC_RETURN_IF_ERROR(
      v.check_keys({"out_channels", "kernel", "stride", "dilation", "groups", "padding", "padding_mode", "bias"}));
  ConvParams p;
  p.bias = fused;
  KC_ASSIGN_OR_RETURN(Value oc, require(v, "out_channels"));
  KC_ASSIGN_OR_RETURN(p.out_channels, read_int(oc));
  KC_ASSIGN_OR_RETURN(Value kernel, require(v, "kernel"));
  KC_ASSIGN_OR_RETURN(p.kernel, read_dims(kernel, rank));
  KC_RETURN_IF_ERROR(read_optional(v, "stride", p.stride, [&](const Value& f) { return read_dims(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "dilation", p.dilation, [&](const Value& f) { return read_dims(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "groups", p.groups, [&](const Value& f) { return read_int(f); }));
  KC_RETURN_IF_ERROR(read_optional(v, "padding", p.padding, [&](const Value& f) { return read_padding(f, rank); }));
  KC_RETURN_IF_ERROR(
      read_optional(v, "padding_mode", p.padding_mode, [&](const Value& f) { return read_padding_mode(f); }));
  if (auto f = v.get("bias")) {
    KC_ASSIGN_OR_RETURN(p.bias, read_bool(*f));
    if (fused && !p.bias) return f->error("conv_bias_relu always has a bias (leave bias out or set it to true)");
  }
  return p;
}

std::string conv_flow(const ConvParams& p) {
  Entries e = {{"out_channels", std::to_string(p.out_channels)}, {"kernel", dims_flow(p.kernel)}};
  add_window(&e, p.stride, p.dilation, p.padding);
  e.emplace_back("groups", std::to_string(p.groups));
  e.emplace_back("padding_mode", std::string(padding_mode_name(p.padding_mode)));
  e.emplace_back("bias", p.bias ? "true" : "false");
  return flow_map(e);
}

StatusOr<OpParams> read_params(const Value& v, size_t rank, const ConvParams&) {
  KC_ASSIGN_OR_RETURN(ConvParams p, read_conv_fields(v, rank, false));
  return OpParams(std::move(p));
}

std::string params_flow(const ConvParams& p) { return conv_flow(p); }

}  // namespace kc::io
