// Names of the case enums and Case equality (which ignores where a case was read).
#include "kc/case.h"

#include <utility>

#include "core/format.h"
#include "ops/op_module.h"

namespace kc {

bool Case::operator==(const Case& o) const {
  auto tensors_equal = [](const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, t] : a) {
      auto it = b.find(k);
      if (it == b.end() || t.dtype != it->second.dtype || !bitwise_equal(t, it->second)) return false;
    }
    return true;
  };
  return name == o.name && dtype == o.dtype && input == o.input && op == o.op && data == o.data && checks == o.checks &&
         tolerance == o.tolerance && accumulation == o.accumulation && deterministic == o.deterministic &&
         tensors_equal(tensors, o.tensors) && tensors_equal(expected, o.expected) && expect == o.expect;
}

DType accumulation_of(const Case& c) { return c.accumulation ? *c.accumulation : default_accumulation(c.dtype); }

// Every alternative must declare kName and kSection: a new op without them fails here.
std::string_view op_name(const OpParams& op) {
  return std::visit([](const auto& p) { return std::decay_t<decltype(p)>::kName; }, op);
}

std::string_view op_section(const OpParams& op) {
  return std::visit([](const auto& p) { return std::decay_t<decltype(p)>::kSection; }, op);
}

namespace {
template <size_t... I>
std::vector<OpParams> ops_in_order(std::index_sequence<I...>) {
  return {OpParams(std::in_place_index<I>)...};
}
}  // namespace

std::vector<OpParams> all_ops() { return ops_in_order(std::make_index_sequence<std::variant_size_v<OpParams>>{}); }

std::optional<OpParams> op_named(std::string_view name) {
  for (OpParams& op : all_ops()) {
    if (op_name(op) == name) return op;
  }
  return std::nullopt;
}

std::string op_name_list(std::string_view last_sep) {
  std::vector<std::string_view> names;
  for (const OpParams& op : all_ops()) names.push_back(op_name(op));
  return name_list(names, last_sep);
}

const PadSpec& padding_of(const OpParams& op) {
  return std::visit([](const auto& p) -> const PadSpec& { return op_padding(p); }, op);
}

bool is_stack(const Case& c) { return std::holds_alternative<StackParams>(c.op); }

std::string checkpoint_name(const CheckpointPolicy& p) {
  switch (p.kind) {
    case CheckpointKind::kNone:
      return "none";
    case CheckpointKind::kEvery:
      return "every:" + std::to_string(p.every);
    case CheckpointKind::kSqrt:
      return "sqrt";
  }
  return "?";
}

int64_t spatial_rank(const Case& c) { return static_cast<int64_t>(c.input.spatial.size()); }

std::string_view pad_kind_name(PadKind kind) {
  switch (kind) {
    case PadKind::kExplicit:
      return "explicit";
    case PadKind::kSame:
      return "same";
    case PadKind::kSameLower:
      return "same_lower";
    case PadKind::kValid:
      return "valid";
  }
  return "?";
}

std::string_view padding_mode_name(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::kZeros:
      return "zeros";
    case PaddingMode::kReflect:
      return "reflect";
    case PaddingMode::kReplicate:
      return "replicate";
    case PaddingMode::kCircular:
      return "circular";
  }
  return "?";
}

std::string_view pool_mode_name(PoolMode mode) { return mode == PoolMode::kInference ? "inference" : "training"; }

std::string_view tie_rule_name(TieRule tie) {
  switch (tie) {
    case TieRule::kFirst:
      return "first";
    case TieRule::kLast:
      return "last";
    case TieRule::kAny:
      return "any";
  }
  return "?";
}

std::string_view fill_name(Fill fill) {
  switch (fill) {
    case Fill::kRandom:
      return "random";
    case Fill::kNormal:
      return "normal";
    case Fill::kInteger:
      return "integer";
    case Fill::kTies:
      return "ties";
    case Fill::kSpecial:
      return "special";
    case Fill::kBoundary:
      return "boundary";
  }
  return "?";
}

std::string_view zero_tensor_name(ZeroTensor t) {
  switch (t) {
    case ZeroTensor::kX:
      return "x";
    case ZeroTensor::kW:
      return "w";
    case ZeroTensor::kDy:
      return "dy";
  }
  return "?";
}

}  // namespace kc
