// Unrolling a stack case into per-layer single-op cases, and the checkpoint plan's
// expected bookkeeping (see stack.h for the model).
#include "stack/stack.h"

#include <algorithm>
#include <cmath>

#include "core/validate.h"

namespace kc {
namespace {

// Layer cases carry the stack's dtype and data so that per-layer validation and
// supports() see what the layer will run; inline tensors never apply to a layer.
Case layer_base(const Case& c, const Dims& shape) {
  Case l;
  l.name = c.name;
  l.dtype = c.dtype;
  l.input = {shape[0], shape[1], Dims(shape.begin() + 2, shape.end())};
  l.data = c.data;
  l.tolerance = c.tolerance;
  l.accumulation = c.accumulation;
  l.deterministic = c.deterministic;
  l.source = c.source;
  return l;
}

StackLayer make_layer(const Case& c, const StackParams& p, const Dims& in_shape) {
  StackLayer layer;
  layer.relu = p.relu;
  layer.user_bias = p.conv.bias;
  layer.conv_case = layer_base(c, in_shape);
  if (p.relu) {
    ConvParams conv = p.conv;
    conv.bias = true;
    layer.conv_case.op = ConvBiasReluParams{conv};
  } else {
    layer.conv_case.op = p.conv;
  }
  layer.conv = unchecked_conv_geometry(layer.conv_case);
  return layer;
}

bool empty_out(const SpatialGeometry& g) {
  return std::any_of(g.dims.begin(), g.dims.end(), [](const DimGeometry& d) { return d.out < 1; });
}

}  // namespace

std::vector<StackLayer> unchecked_stack_layers(const Case& c) {
  std::vector<StackLayer> layers;
  const auto* p = std::get_if<StackParams>(&c.op);
  if (p == nullptr) return layers;
  Dims shape = {c.input.batch, c.input.channels};
  shape.insert(shape.end(), c.input.spatial.begin(), c.input.spatial.end());
  for (int64_t l = 0; l < p->depth; ++l) {
    StackLayer layer = make_layer(c, *p, shape);
    if (empty_out(layer.conv.spatial)) {
      layers.push_back(std::move(layer));
      break;
    }
    if (p->pool) {
      Case pc = layer_base(c, layer.conv.y_shape());
      pc.op = *p->pool;
      layer.pool = unchecked_pool_geometry(pc);
      layer.pool_case = std::move(pc);
      if (empty_out(layer.pool->spatial)) {
        layers.push_back(std::move(layer));
        break;
      }
    }
    shape = layer.out_shape();
    layers.push_back(std::move(layer));
  }
  return layers;
}

Status at_stack_layer(size_t l, const Status& s) { return s.with_context("stack layer " + std::to_string(l + 1)); }

bool has_max_pool(const std::vector<StackLayer>& layers) {
  return std::any_of(layers.begin(), layers.end(), [](const StackLayer& l) { return l.pool.has_value(); });
}

StatusOr<std::vector<StackLayer>> stack_layers(const Case& c) {
  KC_RETURN_IF_ERROR(validate(c));
  return unchecked_stack_layers(c);
}

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
