// The checkpoint plan of a stack's backward pass (docs/ops.md, "Stack") with its exact
// host bookkeeping (which layer inputs are kept, how many layer forwards are recomputed,
// and the peak of activation bytes held). The stack's layers, their geometry and its
// validation are the stack op's (ops/stack/stack_layers.h). Built into kc_core: a backend
// library's resident runner follows the same schedule (stack_schedule.h).
// More on the method: docs/notes.md, section harness/src/stack/stack.h.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/case.h"
#include "ops/stack/stack_layers.h"

namespace kc {

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
