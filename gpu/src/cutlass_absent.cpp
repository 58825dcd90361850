// A build without the CUTLASS headers (cmake/cutlass.cmake did not find them): no engine;
// every conv pass of `cuda` runs on the direct kernels, and the plan says why.
#include "cutlass_conv.h"

namespace kc::gpu {

ConvPassPlan cutlass_plan(const ConvGeometry&, DType, bool relu) {
  const std::string why = "direct: built without the CUTLASS headers (scripts/fetch-cutlass.sh)";
  return {why, why, why, relu ? why : ""};
}

std::unique_ptr<CutlassConv> make_cutlass_conv(std::function<void(const std::string&)>) { return nullptr; }

}  // namespace kc::gpu
