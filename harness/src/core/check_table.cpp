// The check table (check_table.h) and the scope rules derived from it.
#include "core/check_table.h"

#include <algorithm>

#include "core/format.h"
#include "ops/op_module.h"

namespace kc {
namespace {

bool low_precision(const Case& c) { return c.dtype == DType::kF16 || c.dtype == DType::kBF16; }
std::string golden_scope(const Case& c) { return c.expected.empty() ? "the case has no expected: tensors" : ""; }
std::string drift_scope(const Case& c) { return low_precision(c) ? "" : "applies to f16 and bf16 stacks"; }

bool single(const CheckInfo& i) { return i.scope != Scope::kStack; }
bool stacked(const CheckInfo& i) { return i.scope != Scope::kSingle; }

// The op module's reason (ops/op_module.h): every op has its never_applies.
std::string op_never_applies(const Case& c, std::string_view name) {
  return std::visit([&](const auto& p) { return never_applies(c, p, name); }, c.op);
}

}  // namespace

const std::vector<CheckInfo>& check_table() {
  static const std::vector<CheckInfo> table = {
      {"shape", "every output has the contract's shape (SAME keeps ceil(in/s); no silent erosion)", Scope::kBoth, true,
       Judges::kNo, kNeedsNothing, nullptr},
      {"forward", "y (and indices) match the oracle within the tolerance model", Scope::kSingle, false, Judges::kNo,
       kNeedsForward, nullptr},
      {"backward", "dx, dw, db match the oracle's backward", Scope::kBoth, false, Judges::kYes, kNeedsBackward,
       nullptr},
      {"gradcheck", "analytic gradients match central finite differences in f64", Scope::kSingle, true, Judges::kYes,
       kNeedsBackward, nullptr},
      {"adjoint", "<conv(x,w), g> = <x, dx(g,w)> = <w, dw(x,g)>", Scope::kSingle, true, Judges::kYes, kNeedsBackward,
       nullptr},
      {"weight_share", "dw of a batch is the sum of per-sample and per-tile dw; failures classified", Scope::kSingle,
       true, Judges::kYes, kNeedsBackward, nullptr},
      {"argmax", "indices obey the tie/NaN rule and route the gradient; backward without indices refused",
       Scope::kSingle, true, Judges::kYes, kNeedsForward, nullptr},
      {"padding", "equals the op on an explicitly padded input; every element some window reads gets gradient",
       Scope::kSingle, true, Judges::kOnConv, kNeedsForward, nullptr},
      {"determinism", "repeated runs are bitwise equal; buffers refilled in place give no outputs of the old values",
       Scope::kSingle, false, Judges::kNo, kNeedsForward, nullptr},
      {"integrity",
       "every output element is written; inputs and guard bands are unchanged; outputs do not change after the "
       "call returned; the floating-point environment is left as found",
       Scope::kSingle, false, Judges::kNo, kNeedsForward, nullptr},
      {"golden", "results match the case's expected: tensors", Scope::kSingle, true, Judges::kWithExpectedGradients,
       kNeedsForward, &golden_scope},
      {"state", "results do not depend on earlier calls, of the same shape or another: each equals a fresh call's",
       Scope::kSingle, false, Judges::kNo, kNeedsForward, nullptr},
      {"checkpoint", "a stack's gradients are the same with and without recomputation", Scope::kStack, true,
       Judges::kNo, kNeedsNothing, nullptr},
      {"influence", "every input of a stack within its receptive field receives gradient (no blind borders)",
       Scope::kStack, true, Judges::kNo, kNeedsNothing, nullptr},
      {"drift", "f16/bf16 stacks stay within the bound of rounding every layer", Scope::kStack, true, Judges::kNo,
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
  return name_list(names, " and ");
}

std::string oracle_self_reason() {
  return "the oracle is not compared with itself; on the reference the self-checks are " +
         check_names([](const CheckInfo& i) { return i.on_oracle && single(i); }) +
         " (on a stack: " + check_names([](const CheckInfo& i) { return i.on_oracle && stacked(i); }) + ")";
}

std::string check_never_applies(const Case& c, std::string_view name) {
  const CheckInfo* info = find_check(name);
  if (info == nullptr) return "no check is named " + std::string(name);
  if (is_stack(c) && !stacked(*info)) return "checks a single op; a stack is checked by " + check_names(&stacked);
  if (!is_stack(c) && !single(*info)) return "applies to op: stack only";
  const std::string why = info->never_applies ? info->never_applies(c) : "";
  return why.empty() ? op_never_applies(c, name) : why;
}

std::vector<std::string_view> ops_checked_by(const CheckInfo& info) {
  std::vector<std::string_view> names;
  for (const OpParams& op : all_ops()) {
    Case c;
    c.op = op;
    const bool in_scope = std::holds_alternative<StackParams>(op) ? stacked(info) : single(info);
    if (in_scope && op_never_applies(c, info.name).empty()) names.push_back(op_name(op));
  }
  return names;
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
  const bool pool = op_traits(c).indices;
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
