// The stack op (docs/ops.md, "Stack") in kc_core: a stack case unrolled into
// per-layer single-op cases and their resolved geometry; its module rules (validation,
// checks that never apply) are in stack_validate.cpp, declared in op_module.h. The
// checkpoint plan and the executor are the harness's (stack/stack.h, stack/stack_exec.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc {

inline constexpr int64_t kMaxStackDepth = 1000;

struct StackLayer {
  Case conv_case;                 // the layer's conv as a single-op case (conv or conv_bias_relu)
  ConvGeometry conv;              // with relu and no bias: bias = true, run with a zero bias
  std::optional<Case> pool_case;  // its max pool, when the layer has one
  std::optional<PoolGeometry> pool;
  bool relu = false;
  bool user_bias = false;  // the case's conv.bias (db is reported only then)
  Dims in_shape() const { return conv.x_shape(); }
  Dims out_shape() const { return pool ? pool->y_shape() : conv.y_shape(); }
};

// The layers of a stack case whose field rules passed; stops after a layer whose
// output is empty (validate() names it). For a non-stack case: empty.
std::vector<StackLayer> unchecked_stack_layers(const Case& c);

// An error of layer l (0-based) as the stack reports it: "stack layer <l+1>: ...";
// ok stays ok.
Status at_stack_layer(size_t l, const Status& s);

// Whether some layer has a max pool.
bool has_max_pool(const std::vector<StackLayer>& layers);

// Validates the case (every layer) and unrolls it.
StatusOr<std::vector<StackLayer>> stack_layers(const Case& c);

// The work of one forward through a stack, summed over its layers (unchecked_stack_layers),
// against limits.max_op_work; the error names stack.depth, the total and the largest layer.
Status check_stack_work(const Case& c, const std::vector<StackLayer>& layers, const Limits& limits);

// For a stack that validate() refuses because one of its layers is invalid (the one an
// erosion empties, say): the layers up to and including that one, for `kcheck explain`
// to show how it got there. Empty for a valid stack, one whose own fields are wrong, or
// another op.
std::vector<StackLayer> stack_layers_up_to_refused(const Case& c, const Limits& limits = default_limits());

}  // namespace kc
