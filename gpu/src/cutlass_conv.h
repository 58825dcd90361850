// The CUTLASS engine inside the `cuda` backend (docs/architecture.md, "CUTLASS"): a
// zero-padded conv pass runs on a CUTLASS implicit-GEMM kernel where one accepts it,
// between copies to channels-last and back (counted in the pass's time and scratch);
// everything else stays on the direct kernels, which `cuda.direct` runs everywhere.
// Internal to kc_gpu. A build without the CUTLASS headers has no engine
// (make_cutlass_conv() is null) and says so in the plan.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine.h"

namespace kc::gpu {

// What each pass of a conv runs: "cutlass fprop bf16 128x128x64, 3 stages", or
// "direct: channels 3 not a multiple of 8 (...)".
struct ConvPassPlan {
  std::string forward, backward_data, backward_weight;
};
ConvPassPlan cutlass_plan(const ConvGeometry& g, DType dtype, bool relu);

class CutlassConv {
 public:
  virtual ~CutlassConv() = default;
  // Each runs what the engine takes of the call and says what it took; the caller runs
  // the rest on the direct kernels. dy is already masked by relu' for the fused op.
  virtual Status forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, bool* took) = 0;
  // dx or dw null: that gradient is not asked for.
  virtual Status backward(const ConvGeometry& g, DType dtype, const void* x, const void* w, const void* dy, void* dx,
                          void* dw, bool* took_dx, bool* took_dw) = 0;
  virtual Status check_guards() const = 0;
  virtual void release_scratch() = 0;
  virtual int64_t scratch_bytes() const = 0;
};

// `note` receives each kernel name as it runs (the engine's algorithm() for the bench).
std::unique_ptr<CutlassConv> make_cutlass_conv(std::function<void(const std::string&)> note);

}  // namespace kc::gpu
