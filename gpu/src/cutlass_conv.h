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
// "direct: channels 3 not a multiple of 8 (...)"; relu_mask: the fused op's recomputed
// pre-activation in its backward (empty for a plain conv).
struct ConvPassPlan {
  std::string forward, backward_data, backward_weight, relu_mask;
};
ConvPassPlan cutlass_plan(const ConvGeometry& g, DType dtype, bool relu);

class CutlassConv {
 public:
  virtual ~CutlassConv() = default;
  // Each runs what the engine takes of the call and says what it took; the caller runs
  // the rest on the direct kernels.
  virtual Status forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, bool* took) = 0;

  struct Taken {
    bool masked = false, dx = false, dw = false;
  };
  // io.x, io.w, io.b, io.dy in; io.dx or io.dw null: that gradient is not asked for.
  // relu (the fused op): dy is masked here by relu' of a recomputed pre-activation, and
  // the masked dy written channels-first to dz (for the bias gradient and any pass left
  // to the direct kernels); where CUTLASS cannot recompute it nothing is taken.
  virtual Status backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, void* dz, Taken* t) = 0;
  virtual Status check_guards() const = 0;
  virtual void release_scratch() = 0;
  virtual int64_t scratch_bytes() const = 0;
};

// `note` receives each kernel name as it runs (the engine's algorithm() for the bench).
std::unique_ptr<CutlassConv> make_cutlass_conv(std::function<void(const std::string&)> note);

}  // namespace kc::gpu
