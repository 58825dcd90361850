// Unrolling a stack case into per-layer single-op cases (see stack_layers.h).
#include "ops/stack/stack_layers.h"

#include <algorithm>

#include "core/validate.h"
#include "ops/op_module.h"

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

std::vector<MemoryPart> memory_parts(const Case&, const StackParams&, const std::string&, const Cause&) { return {}; }

// A stack's work is its layers' (check_stack_work).
OpWork op_work(const Case&, const StackParams&) { return {0.0, " multiply-adds"}; }

const PadSpec& op_padding(const StackParams& p) { return p.conv.padding; }  // its layer conv's

// One geometry per layer: see stack_layers.h and stack/stack_exec.h.
StatusOr<OpGeometry> geometry_of(const Case&, const StackParams&) {
  return invalid_argument("op: stack has one geometry per layer (use stack_layers)");
}

void drop_padding(StackParams&) {}  // the padding check runs on single ops

}  // namespace kc
