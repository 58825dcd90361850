// The stack module's kcheck explain: its layers' shapes, the extent lost to erosion, the
// receptive field, and the activation memory of each checkpoint policy per dtype.
#include <cstdio>
#include <string>

#include <algorithm>
#include <cstdint>
#include <vector>
#include "cli/explain_text.h"
#include "ops/op_module.h"

#include "ops/stack/stack_layers.h"
#include "stack/stack.h"

namespace kc::cli {

namespace {

std::string extent(const Dims& shape) {
  std::string s;
  for (size_t i = 2; i < shape.size(); ++i) s += (i > 2 ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// Receptive field per dim: rf += (extent - 1) * jump, jump *= stride, over every window.
// Deep strided stacks overflow int64 (stride 2 doubles the jump each layer): the sums
// saturate, and a dim whose true value is past INT64_MAX is written as such.
std::string receptive_field(const std::vector<StackLayer>& layers) {
  const size_t rank = layers.front().conv.spatial.dims.size();
  Dims rf(rank, 1), jump(rank, 1);
  std::vector<bool> over(rank, false);
  for (const StackLayer& l : layers) {
    for (size_t i = 0; i < rank; ++i) {
      for (const SpatialGeometry* g : {&l.conv.spatial, l.pool ? &l.pool->spatial : nullptr}) {
        if (g == nullptr) continue;
        int64_t grow = 0;
        const bool clipped = __builtin_mul_overflow(g->dims[i].extent() - 1, jump[i], &grow) ||
                             __builtin_add_overflow(rf[i], grow, &rf[i]);
        if (clipped) rf[i] = INT64_MAX, over[i] = true;
        jump[i] = saturating_mul(jump[i], g->dims[i].stride);
      }
    }
  }
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    s += (i ? ", " : "") + (over[i] ? std::string("more than 2^63 - 1") : std::to_string(rf[i]));
  }
  return s + "]";
}

// Every layer's input and output shape; `last_note` follows the last row.
void print_layers(const std::vector<StackLayer>& layers, const char* last_note = "") {
  std::printf("  %-6s %-16s %-16s\n", "layer", "in", "out");
  for (size_t l = 0; l < layers.size(); ++l) {
    const StackLayer& L = layers[l];
    const Dims out = L.out_shape();
    const bool empty = std::any_of(out.begin() + 2, out.end(), [](int64_t d) { return d < 1; });
    std::printf("  %-6zu %-16s %-16s%s\n", l + 1, dims_to_string(L.in_shape()).c_str(),
                empty ? "empty" : dims_to_string(out).c_str(), l + 1 == layers.size() ? last_note : "");
  }
}

void print_stack_params(const StackParams& p) {
  std::printf("  depth %lld, layer: conv%s%s%s, checkpoint %s\n", (long long)p.depth, p.conv.bias ? " + bias" : "",
              p.relu ? " + relu" : "", p.pool ? " + maxpool" : "", checkpoint_name(p.checkpoint).c_str());
}

}  // namespace

void explain(const Case& c, const StackParams&) {
  const auto layers = stack_layers(c);
  const StackParams& p = std::get<StackParams>(c.op);
  print_stack_params(p);
  print_layers(*layers);
  const Dims in = layers->front().in_shape(), out = layers->back().out_shape();
  std::string lost;
  for (size_t i = 2; i < in.size(); ++i) lost += (i > 2 ? ", " : "") + std::to_string(in[i] - out[i]);
  std::printf("  extent %s -> %s after %zu layers; erosion: %s pixels lost per dimension\n", extent(in).c_str(),
              extent(out).c_str(), layers->size(), lost.c_str());
  std::printf("  receptive field: %s\n", receptive_field(*layers).c_str());
  std::printf("  activation memory for training (saved for backward):\n  %-10s", "policy");
  const DType dtypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16};
  for (DType d : dtypes) std::printf(" %12s", std::string(dtype_name(d)).c_str());
  std::printf(" %14s\n", "recomputed");
  std::vector<CheckpointPolicy> policies = {
      {CheckpointKind::kNone, 0}, {CheckpointKind::kEvery, 4}, {CheckpointKind::kSqrt, 0}};
  if (p.checkpoint.kind == CheckpointKind::kEvery && p.checkpoint.every != 4)
    policies.insert(policies.begin() + 2, p.checkpoint);
  for (const CheckpointPolicy& pol : policies) {
    std::printf("  %-10s", checkpoint_name(pol).c_str());
    int64_t recomputed = 0;
    for (DType d : dtypes) {
      const CheckpointPlan plan = plan_checkpoints(*layers, pol, d);
      recomputed = plan.recomputations;
      std::printf(" %12s", mib(static_cast<double>(plan.peak_bytes)).c_str());
    }
    std::printf(" %14lld\n", (long long)recomputed);
  }
}

// How its extent got to the layer that is refused.
void explain_refused(const Case& unvalidated, const StackParams& p) {
  if (const std::vector<StackLayer> layers = stack_layers_up_to_refused(unvalidated); !layers.empty()) {
    print_stack_params(p);
    print_layers(layers, "  <- refused");
  }
}

}  // namespace kc::cli
