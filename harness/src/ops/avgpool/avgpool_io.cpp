// The average pool module's YAML (docs/cases.md, "avgpool"): its section read into
// AvgPoolParams (a divisor below 1 refused here, with its line) and written back as one
// flow map.
#include "io/params_yaml.h"
#include "ops/op_module.h"

namespace kc::io {

StatusOr<OpParams> read_params(const Value& v, size_t rank, const AvgPoolParams&) {
  KC_RETURN_IF_ERROR(v.check_keys({"kernel", "stride", "padding", "ceil_mode", "count_include_pad", "divisor"}));
  AvgPoolParams p;
  KC_ASSIGN_OR_RETURN(Value kernel, require(v, "kernel"));
  KC_ASSIGN_OR_RETURN(p.kernel, read_dims(kernel, rank));
  KC_RETURN_IF_ERROR(read_optional(v, "stride", p.stride, [&](const Value& f) { return read_dims(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "padding", p.padding, [&](const Value& f) { return read_padding(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "ceil_mode", p.ceil_mode, [&](const Value& f) { return read_bool(f); }));
  KC_RETURN_IF_ERROR(
      read_optional(v, "count_include_pad", p.count_include_pad, [&](const Value& f) { return read_bool(f); }));
  if (auto f = v.get("divisor")) {
    KC_ASSIGN_OR_RETURN(int64_t d, read_int(*f));
    if (d < 1) return f->error(std::to_string(d) + " is not a divisor: give a count >= 1, or leave divisor out");
    p.divisor = d;
  }
  return OpParams(std::move(p));
}

std::string params_flow(const AvgPoolParams& p) {
  Entries e = {{"kernel", dims_flow(p.kernel)}};
  add_window(&e, p.stride, {}, p.padding);
  e.emplace_back("ceil_mode", p.ceil_mode ? "true" : "false");
  e.emplace_back("count_include_pad", p.count_include_pad ? "true" : "false");
  if (p.divisor) e.emplace_back("divisor", std::to_string(*p.divisor));
  return flow_map(e);
}

}  // namespace kc::io
