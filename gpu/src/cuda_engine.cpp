// The `cuda` engine: our kernels (kernels.h) in the order each op needs them, and the
// CUTLASS engine (cutlass_conv.h) for the zero-padded conv passes it accepts;
// `cuda.direct` is the same engine without CUTLASS: the direct kernels everywhere.
//   conv forward:  [CUTLASS fprop (+bias, relu), or: pre-pad for reflect/replicate/circular
//                  -> implicit GEMM (+bias, relu)]
//   conv backward: [pre-pad] -> [fused: recompute z, masked dy (CUTLASS or ours)]
//                  -> [CUTLASS dgrad, wgrad] -> backward-data [-> fold of the padded
//                  gradient] -> backward-weight (those CUTLASS did not take) -> backward-bias
//   max pool:      forward with compact offsets (training) / gather backward
//   average pool:  forward (window sum / divisor) / gather backward (no atomics)
// Scratch buffers grow and are kept for the next call; all are guard-banded.
#include <algorithm>
#include <initializer_list>

#include "cutlass_conv.h"
#include "engine.h"
#include "kc/gpu/device.h"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/gemm_plan.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

class CudaEngine final : public Engine {
 public:
  // with_cutlass: `cuda` (the CUTLASS engine where it applies, in a build that has it);
  // else `cuda.direct`.
  explicit CudaEngine(bool with_cutlass) : name_(with_cutlass ? "cuda" : "cuda.direct") {
    if (with_cutlass) cutlass_ = make_cutlass_conv([this](const std::string& k) { note(k); });
  }
  std::string name() const override { return name_; }

  Status available() const override {
    auto d = probe_device();
    return d.ok() ? ok_status() : d.status();
  }

  Status supports(const Case& c) const override;
  Status conv_forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) override;
  Status conv_backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) override;
  Status pool_forward(const PoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status pool_backward(const PoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status avgpool_forward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status avgpool_backward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status conv_backward_data(const ConvGeometry& g, DType dtype, const ConvIO& io) override;
  Status conv_backward_weight(const ConvGeometry& g, DType dtype, const ConvIO& io) override;
  Status conv_backward_bias(const ConvGeometry& g, DType dtype, const ConvIO& io) override;
  std::string algorithm() const override { return algorithm_; }
  bool has_atomic_weight_gradient() const override { return true; }
  Status check_guards() const override {
    for (const DeviceBuffer* b : {&xp_, &dym_, &dxp_, &workspace_}) KC_RETURN_IF_ERROR(b->check_guards());
    return cutlass_ ? cutlass_->check_guards() : ok_status();
  }
  void release_scratch() override {
    for (DeviceBuffer* b : {&xp_, &dym_, &dxp_, &workspace_}) *b = DeviceBuffer{};
    if (cutlass_) cutlass_->release_scratch();
  }
  int64_t scratch_bytes() const override {
    int64_t n = cutlass_ ? cutlass_->scratch_bytes() : 0;
    for (const DeviceBuffer* b : {&xp_, &dym_, &dxp_, &workspace_}) n += b->bytes();
    return n;
  }

 private:
  // For a non-zero padding mode, builds xp and points *x at it.
  Status prepad(const ConvGeometry& g, DType dtype, const void** x);
  // The three gradients from dy (already masked by relu' for the fused op); x as the
  // kernels read it (pre-padded for a non-zero padding mode).
  Status data_grad(const ConvGeometry& g, DType dtype, const void* dy, const void* w, void* dx);
  Status weight_grad(const ConvGeometry& g, DType dtype, const void* x, const void* dy, void* dw);
  Status bias_grad(const ConvGeometry& g, DType dtype, const void* dy, void* db);
  void note(const std::string& kernel) {
    if (algorithm_.find(kernel) == std::string::npos) algorithm_ += (algorithm_.empty() ? "" : "; ") + kernel;
  }

  // dx and dw as io asks (null: not asked) from io.x as the kernels read it (pre-padded
  // for a non-zero padding mode), on CUTLASS where it takes them, else direct; relu: io.dy
  // is first masked by relu' of the recomputed pre-activation. *dy: the dy they used.
  Status gradients(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, const void** dy);

  std::string name_;
  std::unique_ptr<CutlassConv> cutlass_;  // null for cuda.direct, or without the CUTLASS headers
  DeviceBuffer xp_, dym_, dxp_, workspace_;
  std::string algorithm_;  // the kernels run so far, for the bench report
};

Status conv_limits(const ConvGeometry& g) {
  constexpr int64_t kMaxN = static_cast<int64_t>(kMaxGridY) * kTileN;  // N tiles on grid.y
  const int64_t widest = std::max({g.out_per_group(), g.in_per_group() * g.spatial.kernel_count()});
  if (widest <= kMaxN) return ok_status();
  return unimplemented("a GEMM dimension of " + std::to_string(widest) +
                       " (channels per group x kernel taps) is over " + std::to_string(kMaxN) +
                       ", the grid's y limit times the tile");
}

Status CudaEngine::supports(const Case& c) const {
  KC_RETURN_IF_ERROR(common_supports(c, "cuda"));
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    auto g = pool_geometry(c);
    if (!g.ok()) return ok_status();
    const int64_t taps = g->spatial.kernel_count();
    if (offset_bytes_for(static_cast<int>(std::min<int64_t>(taps, 1 << 30))) == 0) {
      return unimplemented("a pooling window of " + std::to_string(taps) +
                           " taps: the argmax offset is stored in 16 bits (at most 65534 taps)");
    }
    return ok_status();
  }
  if (std::holds_alternative<AvgPoolParams>(c.op)) return ok_status();  // every geometry, divisor and mode
  auto g = conv_geometry(c);
  return g.ok() ? conv_limits(*g) : ok_status();
}

Status CudaEngine::prepad(const ConvGeometry& g, DType dtype, const void** x) {
  if (g.mode == PaddingMode::kZeros) return ok_status();
  const PadShape p = pad_shape(g);
  const int64_t bytes = static_cast<int64_t>(p.planes) * p.padded_count() * device_bytes(dtype);
  KC_RETURN_IF_ERROR(ensure_size(xp_, bytes, "xp (padded x)"));
  KC_RETURN_IF_ERROR(launch_pad(dtype, p, *x, xp_.data()));
  *x = xp_.data();
  return ok_status();
}

Status CudaEngine::conv_forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) {
  bool took = false;
  if (cutlass_) KC_RETURN_IF_ERROR(cutlass_->forward(g, dtype, relu, io, &took));
  if (took) return ok_status();
  const void* x = io.x;
  KC_RETURN_IF_ERROR(prepad(g, dtype, &x));
  const ConvShape s = conv_shape(g, g.mode != PaddingMode::kZeros);
  note(std::string("igemm forward ") + gemm_tile_name(dtype) + (relu ? " + bias + relu epilogue" : ""));
  return launch_conv_forward(dtype, s, x, io.w, io.b, relu ? ConvEpilogue::kStoreRelu : ConvEpilogue::kStore, nullptr,
                             io.y);
}

Status CudaEngine::conv_backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) {
  ConvIO in = io;
  KC_RETURN_IF_ERROR(prepad(g, dtype, &in.x));
  const void* dy = nullptr;
  KC_RETURN_IF_ERROR(gradients(g, dtype, relu, in, &dy));
  return io.db != nullptr ? bias_grad(g, dtype, dy, io.db) : ok_status();
}

Status CudaEngine::gradients(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, const void** dy) {
  const ConvShape s = conv_shape(g, g.mode != PaddingMode::kZeros);
  // The fused op's dy through relu'(z), z recomputed: no mask was stored by the forward.
  if (relu) KC_RETURN_IF_ERROR(ensure_size(dym_, int64_t{s.y_size()} * device_bytes(dtype), "dz (masked dy)"));
  CutlassConv::Taken t;
  if (cutlass_) {
    ConvIO in = io;
    if (!deterministic()) in.dw = nullptr;  // the float-atomic dw is the direct kernel's (CUTLASS has none)
    KC_RETURN_IF_ERROR(cutlass_->backward(g, dtype, relu, in, relu ? dym_.data() : nullptr, &t));
  }
  if (relu && !t.masked) {
    KC_RETURN_IF_ERROR(
        launch_conv_forward(dtype, s, io.x, io.w, io.b, ConvEpilogue::kReluMaskGrad, io.dy, dym_.data()));
  }
  *dy = relu ? dym_.data() : io.dy;
  if (io.dx != nullptr && !t.dx) KC_RETURN_IF_ERROR(data_grad(g, dtype, *dy, io.w, io.dx));
  if (io.dw != nullptr && !t.dw) KC_RETURN_IF_ERROR(weight_grad(g, dtype, io.x, *dy, io.dw));
  return ok_status();
}

Status CudaEngine::data_grad(const ConvGeometry& g, DType dtype, const void* dy, const void* w, void* dx) {
  const bool padded = g.mode != PaddingMode::kZeros;
  const ConvShape s = conv_shape(g, padded);
  note(std::string("igemm backward-data ") + gemm_tile_name(dtype));
  if (!padded) return launch_conv_backward_data(dtype, s, dy, w, dx, false);
  // The gradient of xp, then folded onto the elements each position copies.
  const PadShape p = pad_shape(g);
  KC_RETURN_IF_ERROR(ensure_size(dxp_, static_cast<int64_t>(p.planes) * p.padded_count() * 4, "dxp (f32)"));
  KC_RETURN_IF_ERROR(launch_conv_backward_data(dtype, s, dy, w, dxp_.data(), true));
  return launch_pad_fold(dtype, p, static_cast<const float*>(dxp_.data()), dx);
}

Status CudaEngine::weight_grad(const ConvGeometry& g, DType dtype, const void* x, const void* dy, void* dw) {
  const ConvShape s = conv_shape(g, g.mode != PaddingMode::kZeros);
  note(std::string("igemm backward-weight ") + gemm_tile_name(dtype) + ", split-K " +
       (deterministic() ? "partials in order" : "f32 atomics"));
  KC_RETURN_IF_ERROR(ensure_size(workspace_, wgrad_workspace_floats(s, deterministic()) * 4, "dw partials (f32)"));
  return launch_conv_backward_weight(dtype, s, x, dy, deterministic(), static_cast<float*>(workspace_.data()), dw);
}

Status CudaEngine::bias_grad(const ConvGeometry& g, DType dtype, const void* dy, void* db) {
  note("bias reduction (tree per channel)");
  return launch_conv_backward_bias(dtype, conv_shape(g, g.mode != PaddingMode::kZeros), dy, db);
}

Status CudaEngine::conv_backward_data(const ConvGeometry& g, DType dtype, const ConvIO& io) {
  ConvIO in = io;
  in.dw = nullptr;
  const void* dy = nullptr;
  return gradients(g, dtype, false, in, &dy);
}

Status CudaEngine::conv_backward_weight(const ConvGeometry& g, DType dtype, const ConvIO& io) {
  ConvIO in = io;
  in.dx = nullptr;
  KC_RETURN_IF_ERROR(prepad(g, dtype, &in.x));
  const void* dy = nullptr;
  return gradients(g, dtype, false, in, &dy);
}

Status CudaEngine::conv_backward_bias(const ConvGeometry& g, DType dtype, const ConvIO& io) {
  return bias_grad(g, dtype, io.dy, io.db);
}

Status CudaEngine::pool_forward(const PoolGeometry& g, DType dtype, const PoolIO& io) {
  const PoolShape s = pool_shape(g);
  note(io.offsets != nullptr ? "max-pool forward, compact argmax offsets" : "max-pool forward");
  return launch_maxpool_forward(dtype, s, g.tie == TieRule::kLast, io.x, io.y, io.offsets,
                                offset_bytes_for(s.kernel_count()));
}

Status CudaEngine::pool_backward(const PoolGeometry& g, DType dtype, const PoolIO& io) {
  const PoolShape s = pool_shape(g);
  note("max-pool backward gather");
  return launch_maxpool_backward(dtype, s, io.dy, io.offsets, offset_bytes_for(s.kernel_count()), io.dx);
}

Status CudaEngine::avgpool_forward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) {
  note("avg-pool forward");
  return launch_avgpool_forward(dtype, avgpool_shape(g), io.x, io.y);
}

Status CudaEngine::avgpool_backward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) {
  note("avg-pool backward gather");
  return launch_avgpool_backward(dtype, avgpool_shape(g), io.dy, io.dx);
}

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(bool with_cutlass) { return std::make_unique<CudaEngine>(with_cutlass); }

std::string gemm_tile_name(DType dtype) {
  return std::to_string(kTileM) + "x" + std::to_string(kTileN) + "x" + std::to_string(kTileK) + " tile, " +
         (dtype == DType::kF32 ? "FFMA" : "WMMA");
}

}  // namespace kc::gpu
