// The stack op's module rules (ops/op_module.h): its validation (its own fields, the work
// cap summed over its layers, every layer as the single-op case it runs as, then the
// memory cap of validate_limits.cpp) and the checks that never apply to it.
#include <limits>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/validate.h"
#include "core/validate_limits.h"
#include "core/validate_rules.h"
#include "ops/op_module.h"
#include "ops/stack/stack_layers.h"

namespace kc {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The stack's own fields: depth, no inline tensors, the layer's conv and pool fields.
Status check_stack_fields(const Case& c, const StackParams& p, const Limits& limits) {
  if (p.depth < 1 || p.depth > kMaxStackDepth) {
    return invalid_argument("stack.depth: " + num(p.depth) + " is outside 1 to " + num(kMaxStackDepth));
  }
  if (!c.tensors.empty() || !c.expected.empty()) {
    return invalid_argument(std::string(c.tensors.empty() ? "expected" : "tensors") +
                            ": inline tensors are not supported for op stack (every layer has its own weights)");
  }
  if (!c.data.zero.empty()) {
    return invalid_argument("data.zero: not supported for op stack (a stack fills its own inputs, layer by layer)");
  }
  if (c.data.fill == Fill::kBoundary) {  // its layers' infinities and NaN would reach every output a few layers on
    return invalid_argument("data.fill: boundary is not supported for op stack (checked on its single-op layers)");
  }
  KC_RETURN_IF_ERROR(check_conv_fields("stack.layer.conv", p.conv, c.input, limits));
  if (p.pool) KC_RETURN_IF_ERROR(check_pool_fields(*p.pool, c.input, limits));
  return ok_status();
}

// One layer as the single-op cases it runs as (accumulation included). Memory and work
// are the stack's caps over all layers (validate_op): a layer is not a single-op case
// with the checks' copies of its own, and a stack's forward runs every layer.
Status check_layer(const StackLayer& layer, const Limits& limits) {
  Limits per_layer = limits;
  per_layer.max_case_bytes = kMax;
  per_layer.max_op_work = std::numeric_limits<double>::infinity();
  KC_RETURN_IF_ERROR(validate(layer.conv_case, per_layer));
  return layer.pool_case ? validate(*layer.pool_case, per_layer) : ok_status();
}

}  // namespace

// A stack runs its layers' forwards one after the other, and the checks run that forward
// and the backward as often as they run a single op's: the cap of one forward applies to
// the sum over the layers, not to each layer (1000 layers under the cap each could take
// a day). Layers past one that erodes to nothing are not unrolled; it counts 0.
Status check_stack_work(const Case& c, const std::vector<StackLayer>& layers, const Limits& limits) {
  double work = 0.0, largest = 0.0;
  size_t largest_at = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const double w = op_work(layers[i].conv_case) + (layers[i].pool_case ? op_work(*layers[i].pool_case) : 0.0);
    work += w;
    if (w > largest) largest = w, largest_at = i;
  }
  if (work <= limits.max_op_work) return ok_status();
  const std::string what = has_max_pool(layers) ? " multiply-adds and comparisons" : " multiply-adds";
  const std::string cap = ", over the cap of " + count_text(limits.max_op_work);
  const std::string hint = ": the checks would run for hours on the reference (" +
                           std::string(largest > limits.max_op_work ? "sizes" : "depth or sizes") + " too large; set " +
                           kOpWorkVariable + " to raise it)";
  if (largest > limits.max_op_work) {  // one layer alone: its sizes, not the depth
    return resource_exhausted("stack.layer.conv: one forward through layer " + std::to_string(largest_at + 1) +
                              " alone takes about " + count_text(largest) + what + cap + hint);
  }
  const int64_t depth = std::get<StackParams>(c.op).depth;
  return resource_exhausted("stack.depth: one forward through the stack's " + std::to_string(depth) +
                            (depth == 1 ? " layer" : " layers") + " takes about " + count_text(work) + what +
                            " (the largest layer, " + std::to_string(largest_at + 1) + ", takes " +
                            count_text(largest) + ")" + cap + " for the whole stack" + hint);
}

Status validate_op(const Case& c, const StackParams& p, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_stack_fields(c, p, limits));
  KC_RETURN_IF_ERROR(check_exact_tolerance(c, {"x", "w", "b"}, nullptr));
  const std::vector<StackLayer> layers = unchecked_stack_layers(c);
  // Work first: the layers' geometry rules take time linear in their windows.
  KC_RETURN_IF_ERROR(check_stack_work(c, layers, limits));
  for (size_t i = 0; i < layers.size(); ++i) KC_RETURN_IF_ERROR(at_stack_layer(i, check_layer(layers[i], limits)));
  return check_memory(c, limits);
}

OpTraits op_traits(const StackParams&) { return {}; }  // its layers' ops answer

InputShapes input_shapes(const Case&, const StackParams&) { return {}; }  // made per layer

std::string never_applies(const Case& c, const StackParams&, std::string_view check) {
  if (check == "backward" && (c.dtype == DType::kF16 || c.dtype == DType::kBF16)) {
    return "f16/bf16 gradients are checked op by op (single-op cases in the dtype): through a stack, values that "
           "round to a tie in a max pool, or a relu input within rounding of 0, route the gradient differently in "
           "any two correct runs";
  }
  return "";
}

std::vector<StackLayer> stack_layers_up_to_refused(const Case& c, const Limits& limits) {
  const auto* p = std::get_if<StackParams>(&c.op);
  if (p == nullptr || !check_stack_fields(c, *p, limits).ok()) return {};
  std::vector<StackLayer> layers = unchecked_stack_layers(c);
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!check_layer(layers[i], limits).ok()) {
      layers.resize(i + 1);
      return layers;
    }
  }
  return {};
}

}  // namespace kc
