// The checkpoint plan's expected bookkeeping (see stack.h for the model).
#include "stack/stack.h"

#include <algorithm>
#include <cmath>

namespace kc {

int64_t checkpoint_segment(const CheckpointPolicy& p, int64_t depth) {
  switch (p.kind) {
    case CheckpointKind::kNone:
      return std::max<int64_t>(depth, 1);
    case CheckpointKind::kEvery:
      return std::clamp<int64_t>(p.every, 1, std::max<int64_t>(depth, 1));
    case CheckpointKind::kSqrt: {
      int64_t k = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(depth))));
      while (k * k < depth) ++k;
      return std::max<int64_t>(k, 1);
    }
  }
  return 1;
}

int64_t record_bytes(const StackLayer& layer, DType dtype) {
  int64_t bytes = element_count(layer.in_shape()) * static_cast<int64_t>(storage_bytes(dtype));
  if (layer.pool) bytes += element_count(layer.pool->y_shape()) * 8;
  return bytes;
}

CheckpointPlan plan_checkpoints(const std::vector<StackLayer>& layers, const CheckpointPolicy& p, DType dtype) {
  CheckpointPlan plan;
  const int64_t depth = static_cast<int64_t>(layers.size());
  plan.segment = checkpoint_segment(p, depth);
  const int64_t k = plan.segment;
  const int64_t segments = depth == 0 ? 0 : (depth + k - 1) / k;
  int64_t max_record = 0;
  for (const StackLayer& l : layers) max_record = std::max(max_record, record_bytes(l, dtype));
  // While segment j is differentiated: the checkpoints of segments 0..j-1 (their input
  // activation only) and every record of segment j.
  int64_t held_checkpoints = 0;
  for (int64_t j = 0; j < segments; ++j) {
    const int64_t first = j * k, last = std::min(depth, first + k);
    int64_t segment_bytes = 0;
    for (int64_t l = first; l < last; ++l) segment_bytes += record_bytes(layers[static_cast<size_t>(l)], dtype);
    plan.peak_bytes = std::max(plan.peak_bytes, held_checkpoints + segment_bytes);
    held_checkpoints +=
        element_count(layers[static_cast<size_t>(first)].in_shape()) * static_cast<int64_t>(storage_bytes(dtype));
    if (j + 1 < segments) plan.recomputations += last - first;
  }
  const int64_t root = checkpoint_segment({CheckpointKind::kSqrt, 0}, depth);
  const int64_t bound_layers = p.kind == CheckpointKind::kNone   ? depth
                               : p.kind == CheckpointKind::kSqrt ? 2 * root + k
                                                                 : segments + k;
  plan.bound_bytes = saturating_mul(bound_layers, max_record);
  return plan;
}

}  // namespace kc
