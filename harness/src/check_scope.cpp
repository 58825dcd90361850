// Checks that never apply to a case, from the case alone (see kc/check_scope.h). The
// reasons are the checks' own (harness/src/checks/*.cpp, runner.cpp); the test
// tests/harness/check_scope_test.cpp runs each refused pair and expects it SKIPPED.
#include "kc/check_scope.h"

namespace kc {
namespace {

bool is_stack_check(std::string_view name) {
  return name == "shape" || name == "backward" || name == "checkpoint" || name == "influence" || name == "drift";
}

std::string stack_never_applies(const Case& c, std::string_view name) {
  if (!is_stack_check(name)) {
    return "checks a single op; a stack is checked by shape, backward, checkpoint, influence and drift";
  }
  const bool low = c.dtype == DType::kF16 || c.dtype == DType::kBF16;
  if (name == "backward" && low) {
    return "f16/bf16 gradients are checked op by op (single-op cases in the dtype): through a stack, values that "
           "round to a tie in a max pool, or a relu input within rounding of 0, route the gradient differently in "
           "any two correct runs";
  }
  if (name == "drift" && !low) return "applies to f16 and bf16 stacks";
  return {};
}

}  // namespace

std::string check_never_applies(const Case& c, std::string_view name) {
  if (is_stack(c)) return stack_never_applies(c, name);
  if (name == "checkpoint" || name == "influence" || name == "drift") return "applies to op: stack only";
  const auto* pool = std::get_if<MaxPoolParams>(&c.op);
  if (name == "golden" && c.expected.empty()) return "the case has no expected: tensors";
  if (name == "argmax" && pool == nullptr) return "argmax applies to max pooling only";
  if (name == "adjoint" && pool != nullptr) {
    return "max pool is not linear in x, so it has no adjoint identity (gradcheck and argmax cover it)";
  }
  if (name == "adjoint" && std::holds_alternative<ConvBiasReluParams>(c.op)) {
    return "relu makes conv_bias_relu nonlinear, so it has no adjoint identity (run it on plain conv)";
  }
  if (name == "weight_share" && pool != nullptr) return "max pool has no weights, so nothing is shared";
  if ((name == "gradcheck" || name == "backward") && pool != nullptr && pool->mode == PoolMode::kInference) {
    return "inference mode keeps no indices, so there is no backward to check";
  }
  return {};
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

}  // namespace kc
