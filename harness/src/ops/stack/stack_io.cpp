// The stack module's YAML (docs/cases.md, "stack"): depth, its layer (a conv, a relu,
// a training-mode max pool, each through its own module's fields) and the checkpoint
// policy; written back as one flow map.
#include "io/params_yaml.h"
#include "ops/conv/conv_io.h"
#include "ops/maxpool/maxpool_io.h"
#include "ops/op_module.h"

namespace kc::io {

namespace {

// `none`, `sqrt` or the string "every:K" with K >= 1.
StatusOr<CheckpointPolicy> read_checkpoint(const Value& v) {
  if (!v.is_scalar()) return v.type_error("none, sqrt or \"every:K\"");
  CheckpointPolicy p;
  const std::string t = v.text();
  if (t == "none") return p;
  if (t == "sqrt") return CheckpointPolicy{CheckpointKind::kSqrt, 0};
  if (t.rfind("every:", 0) == 0) {
    bool overflow = false;
    const std::optional<int64_t> k = parse_int_text(t.substr(6), &overflow);
    if (!k || *k < 1) return v.error("every:K needs an integer K >= 1, got \"" + t + "\"");
    return CheckpointPolicy{CheckpointKind::kEvery, *k};
  }
  return v.type_error("none, sqrt or \"every:K\"");
}

}  // namespace

StatusOr<OpParams> read_params(const Value& v, size_t rank, const StackParams&) {
  KC_RETURN_IF_ERROR(v.check_keys({"depth", "layer", "checkpoint"}));
  StackParams p;
  KC_ASSIGN_OR_RETURN(Value depth, require(v, "depth"));
  KC_ASSIGN_OR_RETURN(p.depth, read_int(depth));
  KC_ASSIGN_OR_RETURN(Value layer, require(v, "layer"));
  KC_RETURN_IF_ERROR(layer.check_keys({ConvParams::kSection, "relu", MaxPoolParams::kSection}));
  KC_ASSIGN_OR_RETURN(Value conv, require(layer, ConvParams::kSection));
  KC_ASSIGN_OR_RETURN(p.conv, read_conv_fields(conv, rank, false));
  if (auto f = layer.get("relu")) {
    KC_ASSIGN_OR_RETURN(p.relu, read_bool(*f));
  }
  if (auto f = layer.get(MaxPoolParams::kSection)) {
    KC_ASSIGN_OR_RETURN(MaxPoolParams pool, read_maxpool_fields(*f, rank));
    if (pool.mode != PoolMode::kTraining)
      return f->error("a stack's max pool runs in training mode (its backward needs indices)");
    p.pool = std::move(pool);
  }
  KC_RETURN_IF_ERROR(read_optional(v, "checkpoint", p.checkpoint, [&](const Value& f) { return read_checkpoint(f); }));
  return OpParams(std::move(p));
}

std::string params_flow(const StackParams& p) {
  Entries layer = {{std::string(ConvParams::kSection), conv_flow(p.conv)}, {"relu", p.relu ? "true" : "false"}};
  if (p.pool) layer.emplace_back(MaxPoolParams::kSection, maxpool_flow(*p.pool));
  return flow_map({{"depth", std::to_string(p.depth)},
                   {"layer", flow_map(layer)},
                   {"checkpoint", quote(checkpoint_name(p.checkpoint))}});
}

}  // namespace kc::io
