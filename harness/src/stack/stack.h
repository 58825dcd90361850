// Stack geometry (docs/ops.md, "Stack"; docs/cases.md, "Stacks"): a stack case unrolled into per-layer
// single-op cases and their resolved geometry, and the checkpoint plan of the backward
// pass with its exact host bookkeeping (which layer inputs are kept, how many layer
// forwards are recomputed, and the peak of activation bytes held).
// More on the method: docs/notes.md, section harness/src/stack/stack.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// Segment length K of a policy for a depth (none: depth).
int64_t checkpoint_segment(const CheckpointPolicy& p, int64_t depth);

// Bytes of layer l's record (0-based index into layers) in the storage dtype.
int64_t record_bytes(const StackLayer& layer, DType dtype);

struct CheckpointPlan {
  int64_t segment = 1;         // K
  int64_t recomputations = 0;  // layer forwards run again in the backward pass
  int64_t peak_bytes = 0;      // most activation bytes held at once
  int64_t bound_bytes = 0;     // the policy's bound (see stack.cpp)
};

// The expected bookkeeping, computed from the formulas above (the executor counts
// independently and the checkpoint check compares the two).
CheckpointPlan plan_checkpoints(const std::vector<StackLayer>& layers, const CheckpointPolicy& p, DType dtype);

}  // namespace kc
