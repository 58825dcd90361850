// The max pool module's YAML (docs/cases.md, "maxpool"): its section read into
// MaxPoolParams and written back as one flow map.
#include "ops/maxpool/maxpool_io.h"

#include "io/params_yaml.h"
#include "ops/op_module.h"

namespace kc::io {

StatusOr<MaxPoolParams> read_maxpool_fields(const Value& v, size_t rank) {
  KC_RETURN_IF_ERROR(v.check_keys({"kernel", "stride", "padding", "dilation", "ceil_mode", "mode", "tie"}));
  MaxPoolParams p;
  KC_ASSIGN_OR_RETURN(Value kernel, require(v, "kernel"));
  KC_ASSIGN_OR_RETURN(p.kernel, read_dims(kernel, rank));
  KC_RETURN_IF_ERROR(read_optional(v, "stride", p.stride, [&](const Value& f) { return read_dims(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "dilation", p.dilation, [&](const Value& f) { return read_dims(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "padding", p.padding, [&](const Value& f) { return read_padding(f, rank); }));
  KC_RETURN_IF_ERROR(read_optional(v, "ceil_mode", p.ceil_mode, [&](const Value& f) { return read_bool(f); }));
  KC_RETURN_IF_ERROR(read_optional(v, "mode", p.mode, [&](const Value& f) {
    return read_enum<PoolMode>(f, {{"inference", PoolMode::kInference}, {"training", PoolMode::kTraining}});
  }));
  KC_RETURN_IF_ERROR(read_optional(v, "tie", p.tie, [&](const Value& f) {
    return read_enum<TieRule>(f, {{"first", TieRule::kFirst}, {"last", TieRule::kLast}, {"any", TieRule::kAny}});
  }));
  return p;
}

std::string maxpool_flow(const MaxPoolParams& p) {
  Entries e = {{"kernel", dims_flow(p.kernel)}};
  add_window(&e, p.stride, p.dilation, p.padding);
  e.emplace_back("ceil_mode", p.ceil_mode ? "true" : "false");
  e.emplace_back("mode", std::string(pool_mode_name(p.mode)));
  e.emplace_back("tie", std::string(tie_rule_name(p.tie)));
  return flow_map(e);
}

StatusOr<OpParams> read_params(const Value& v, size_t rank, const MaxPoolParams&) {
  KC_ASSIGN_OR_RETURN(MaxPoolParams p, read_maxpool_fields(v, rank));
  return OpParams(std::move(p));
}

std::string params_flow(const MaxPoolParams& p) { return maxpool_flow(p); }

}  // namespace kc::io
