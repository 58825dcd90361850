// The check table (check_table.h) and the scope rules derived from it.
#include "core/check_table.h"

#include <algorithm>

#include "kc/overloaded.h"

namespace kc {
namespace {

const MaxPoolParams* pool_of(const Case& c) { return std::get_if<MaxPoolParams>(&c.op); }
bool low_precision(const Case& c) { return c.dtype == DType::kF16 || c.dtype == DType::kBF16; }
bool inference_pool(const Case& c) { return pool_of(c) != nullptr && pool_of(c)->mode == PoolMode::kInference; }

std::string backward_scope(const Case& c) {
  if (is_stack(c) && low_precision(c)) {
    return "f16/bf16 gradients are checked op by op (single-op cases in the dtype): through a stack, values that "
           "round to a tie in a max pool, or a relu input within rounding of 0, route the gradient differently in "
           "any two correct runs";
  }
  return inference_pool(c) ? "inference mode keeps no indices, so there is no backward to check" : "";
}

std::string gradcheck_scope(const Case& c) {
  return inference_pool(c) ? "inference mode keeps no indices, so there is no backward to check" : "";
}

std::string adjoint_scope(const Case& c) {
  if (pool_of(c)) return "max pool is not linear in x, so it has no adjoint identity (gradcheck and argmax cover it)";
  if (std::holds_alternative<AvgPoolParams>(c.op)) {
    return "the adjoint identity is checked on conv's three products; an average pool's linear map is checked by "
           "gradcheck";
  }
  if (std::holds_alternative<ConvBiasReluParams>(c.op)) {
    return "relu makes conv_bias_relu nonlinear, so it has no adjoint identity (run it on plain conv)";
  }
  return {};
}

std::string weight_share_scope(const Case& c) {
  if (pool_of(c)) return "max pool has no weights, so nothing is shared";
  if (std::holds_alternative<AvgPoolParams>(c.op)) return "average pool has no weights, so nothing is shared";
  return "";
}

std::string argmax_scope(const Case& c) { return pool_of(c) ? "" : "argmax applies to max pooling only"; }
std::string golden_scope(const Case& c) { return c.expected.empty() ? "the case has no expected: tensors" : ""; }
std::string drift_scope(const Case& c) { return low_precision(c) ? "" : "applies to f16 and bf16 stacks"; }

constexpr unsigned kSingle = kOpConv | kOpFused | kOpPool | kOpAvgPool;

}  // namespace

unsigned op_mask(const Case& c) {
  return std::visit(Overloaded{[](const ConvParams&) { return unsigned{kOpConv}; },
                               [](const ConvBiasReluParams&) { return unsigned{kOpFused}; },
                               [](const MaxPoolParams&) { return unsigned{kOpPool}; },
                               [](const AvgPoolParams&) { return unsigned{kOpAvgPool}; },
                               [](const StackParams&) { return unsigned{kOpStack}; }},
                    c.op);
}

const std::vector<CheckInfo>& check_table() {
  static const std::vector<CheckInfo> table = {
      {"shape", "every output has the contract's shape (SAME keeps ceil(in/s); no silent erosion)", kOpAll, true,
       Judges::kNo, kNeedsNothing, nullptr},
      {"forward", "y (and indices) match the oracle within the tolerance model", kSingle, false, Judges::kNo,
       kNeedsForward, nullptr},
      {"backward", "dx, dw, db match the oracle's backward", kOpAll, false, Judges::kYes, kNeedsBackward,
       &backward_scope},
      {"gradcheck", "analytic gradients match central finite differences in f64", kSingle, true, Judges::kYes,
       kNeedsBackward, &gradcheck_scope},
      {"adjoint", "<conv(x,w), g> = <x, dx(g,w)> = <w, dw(x,g)>", kOpConv, true, Judges::kYes, kNeedsBackward,
       &adjoint_scope},
      {"weight_share", "dw of a batch is the sum of per-sample and per-tile dw; failures classified",
       kOpConv | kOpFused, true, Judges::kYes, kNeedsBackward, &weight_share_scope},
      {"argmax", "indices obey the tie/NaN rule and route the gradient; backward without indices refused", kOpPool,
       true, Judges::kYes, kNeedsForward, &argmax_scope},
      {"padding", "equals the op on an explicitly padded input; every element some window reads gets gradient", kSingle,
       true, Judges::kOnConv, kNeedsForward, nullptr},
      {"determinism", "repeated runs are bitwise equal; buffers refilled in place give no outputs of the old values",
       kSingle, false, Judges::kNo, kNeedsForward, nullptr},
      {"integrity",
       "every output element is written; inputs and guard bands are unchanged; outputs do not change after the "
       "call returned; the floating-point environment is left as found",
       kSingle, false, Judges::kNo, kNeedsForward, nullptr},
      {"golden", "results match the case's expected: tensors", kSingle, true, Judges::kWithExpectedGradients,
       kNeedsForward, &golden_scope},
      {"state", "results do not depend on earlier calls, of the same shape or another: each equals a fresh call's",
       kSingle, false, Judges::kNo, kNeedsForward, nullptr},
      {"checkpoint", "a stack's gradients are the same with and without recomputation", kOpStack, true, Judges::kNo,
       kNeedsNothing, nullptr},
      {"influence", "every input of a stack within its receptive field receives gradient (no blind borders)", kOpStack,
       true, Judges::kNo, kNeedsNothing, nullptr},
      {"drift", "f16/bf16 stacks stay within the bound of rounding every layer", kOpStack, true, Judges::kNo,
       kNeedsNothing, &drift_scope},
  };
  return table;
}

const CheckInfo* find_check(std::string_view name) {
  for (const CheckInfo& info : check_table()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string check_names(bool (*pick)(const CheckInfo&)) {
  std::vector<std::string_view> names;
  for (const CheckInfo& info : check_table()) {
    if (pick(info)) names.push_back(info.name);
  }
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += std::string(i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + std::string(names[i]);
  }
  return text;
}

std::string oracle_self_reason() {
  return "the oracle is not compared with itself; on the reference the self-checks are " +
         check_names([](const CheckInfo& i) { return i.on_oracle && (i.ops & kSingle) != 0; }) +
         " (on a stack: " + check_names([](const CheckInfo& i) { return i.on_oracle && (i.ops & kOpStack) != 0; }) +
         ")";
}

std::string check_never_applies(const Case& c, std::string_view name) {
  const CheckInfo* info = find_check(name);
  if (info == nullptr) return "no check is named " + std::string(name);
  if (is_stack(c) && (info->ops & kOpStack) == 0) {
    return "checks a single op; a stack is checked by " +
           check_names([](const CheckInfo& i) { return (i.ops & kOpStack) != 0; });
  }
  if (!is_stack(c) && (info->ops & kSingle) == 0) return "applies to op: stack only";
  const std::string why = info->never_applies ? info->never_applies(c) : "";
  if (!why.empty() || (info->ops & op_mask(c)) != 0) return why;
  return "does not apply to op: " + std::string(op_name(c.op));
}

Status validate_checks(const Case& c, bool from_defaults) {
  std::string reasons;
  for (const std::string& name : c.checks) {
    const std::string why = check_never_applies(c, name);
    if (why.empty() && from_defaults) return ok_status();
    if (why.empty()) continue;
    if (!from_defaults) {
      return invalid_argument("checks: " + name + " never applies to this case: " + why +
                              " (leave it out of checks:, or leave checks: out for every check that applies)");
    }
    reasons += (reasons.empty() ? "" : "; ") + name + ": " + why;
  }
  if (reasons.empty()) return ok_status();
  return invalid_argument("checks: none of the checks this case takes from defaults: applies to it (" + reasons +
                          "); give the case its own checks:");
}

std::vector<std::string> checks_that_apply(const Case& c) {
  std::vector<std::string> names;
  for (const std::string& name : c.checks) {
    if (check_never_applies(c, name).empty()) names.push_back(name);
  }
  return names;
}

bool judges_backward(const Case& c) {
  if (c.checks.empty()) return true;
  const bool pool = pool_of(c) != nullptr;
  const bool expects_gradient = c.expected.count("dx") || c.expected.count("dw") || c.expected.count("db");
  for (const std::string& name : c.checks) {
    const CheckInfo* info = find_check(name);
    if (info == nullptr) continue;
    if (info->judges == Judges::kYes || (info->judges == Judges::kOnConv && !pool) ||
        (info->judges == Judges::kWithExpectedGradients && expects_gradient)) {
      return true;
    }
  }
  return false;
}

}  // namespace kc
