// cuda_kernel_plan (kc/gpu/backends.h): what `cuda` and `cuda.direct` would run for a
// case, decided on the host as the engines decide it (supports(), the CUTLASS choice per
// pass), without a device: kcheck explain prints it.
#include <string>
#include <vector>

#include "cutlass_conv.h"
#include "engine.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/gemm_plan.h"

namespace kc::gpu {
namespace {

std::string direct_kernels(DType dtype) {
  return "direct (igemm " + std::to_string(kTileM) + "x" + std::to_string(kTileN) + "x" + std::to_string(kTileK) +
         " tile, " + (dtype == DType::kF32 ? "FFMA" : "WMMA") + ")";
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
    StatusOr<ConvGeometry> g = conv_geometry(c);
    if (!std::holds_alternative<ConvParams>(c.op) && !relu) {
      lines.push_back(name + "direct (" + std::string(op_name(c.op)) + " kernels)");
    } else if (!g.ok()) {
      lines.push_back(name + "none: " + g.status().message());
    } else if (!with_cutlass) {
      lines.push_back(name + direct_kernels(c.dtype) + " for every pass");
    } else {
      const ConvPassPlan p = cutlass_plan(*g, c.dtype, relu);
      lines.push_back(name + "forward: " + p.forward);
      lines.push_back(name + "backward data: " + p.backward_data);
      lines.push_back(name + "backward weight: " + p.backward_weight);
      if (relu) lines.push_back(name + "backward relu mask: " + p.relu_mask);
    }
  }
  return lines;
}

}  // namespace kc::gpu
