// cuda_kernel_plan (kc/gpu/backends.h): what `cuda` and `cuda.direct` would run for a
// case, decided on the host as the engines decide it (supports(), the CUTLASS choice per
// pass; for a stack per layer), without a device: kcheck explain prints it.
#include <string>
#include <vector>

#include "cutlass_conv.h"
#include "engine.h"
#include "kc/gpu/backends.h"
#include "ops/stack/stack_layers.h"

namespace kc::gpu {
namespace {

// One line per conv pass of the `cuda` engine (the CUTLASS choice, or why not).
std::vector<std::string> conv_lines(const ConvGeometry& g, DType dtype, bool relu) {
  const ConvPassPlan p = cutlass_plan(g, dtype, relu);
  std::vector<std::string> lines = {"forward: " + p.forward, "backward data: " + p.backward_data,
                                    "backward weight: " + p.backward_weight};
  if (relu) lines.push_back("backward relu mask: " + p.relu_mask);
  return lines;
}

// A stack's conv layers, consecutive layers that run the same kernels as one range
// ("layers 1-24: forward: ..."); its max pools run our kernels.
std::vector<std::string> stack_lines(const Case& c) {
  std::vector<std::vector<std::string>> per_layer;
  for (const StackLayer& l : unchecked_stack_layers(c)) per_layer.push_back(conv_lines(l.conv, c.dtype, l.relu));
  std::vector<std::string> out;
  for (size_t first = 0, last = 0; first < per_layer.size(); first = ++last) {
    while (last + 1 < per_layer.size() && per_layer[last + 1] == per_layer[first]) ++last;
    const std::string range = first == last ? "layer " + std::to_string(first + 1)
                                            : "layers " + std::to_string(first + 1) + "-" + std::to_string(last + 1);
    for (const std::string& l : per_layer[first]) out.push_back(range + ": " + l);
  }
  return out;
}

}  // namespace

std::vector<std::string> cuda_kernel_plan(const Case& c) {
  std::vector<std::string> lines;
  for (const bool with_cutlass : {true, false}) {
    const std::unique_ptr<Engine> engine = make_cuda_engine(with_cutlass);
    const std::string name = engine->name() + ": ";
    if (Status s = engine->supports(c); !s.ok()) {
      lines.push_back(name + "refused: " + s.message());
      continue;
    }
    const bool relu = std::holds_alternative<ConvBiasReluParams>(c.op);
    const bool stack = std::holds_alternative<StackParams>(c.op);
    StatusOr<ConvGeometry> g = stack ? StatusOr<ConvGeometry>(ConvGeometry{}) : conv_geometry(c);
    std::vector<std::string> passes;
    if (!std::holds_alternative<ConvParams>(c.op) && !relu && !stack) {
      passes = {"direct (" + std::string(op_name(c.op)) + " kernels)"};
    } else if (!g.ok()) {
      passes = {"none: " + g.status().message()};
    } else if (!with_cutlass) {
      passes = {"direct (igemm " + gemm_tile_name(c.dtype) + ") for every " + (stack ? "layer's conv" : "pass")};
    } else {
      passes = stack ? stack_lines(c) : conv_lines(*g, c.dtype, relu);
    }
    for (const std::string& p : passes) lines.push_back(name + p);
  }
  return lines;
}

}  // namespace kc::gpu
