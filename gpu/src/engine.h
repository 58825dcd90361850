// Engine: the device side of a GPU backend, on device pointers. The `cuda` engine runs
// our kernels, the `cudnn` engine runs cuDNN; both sit behind the same host adapter
// (device_backend.cpp: upload, poison, call, check guards, download) and the same
// prepared op (device_prepared_op.h: data kept on the device). Internal to kc_gpu.
//
// Pointers are device memory in the case dtype's storage (host_convert.h); outputs are
// written completely (the adapter poisons them first and the integrity check looks).
#pragma once

#include <memory>
#include <string>

#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc::gpu {

struct ConvIO {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* b = nullptr;   // null without a bias
  const void* dy = nullptr;  // backward
  void* y = nullptr;         // forward
  void* dx = nullptr;        // backward
  void* dw = nullptr;
  void* db = nullptr;  // null without a bias
};

// Max pooling and average pooling (which has no offsets).
struct PoolIO {
  const void* x = nullptr;
  void* y = nullptr;
  void* offsets = nullptr;  // max-pool training: compact argmax offsets (pool_shape.h); else null
  const void* dy = nullptr;
  void* dx = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  virtual Status available() const = 0;
  // Refusals for what this engine cannot run (unimplemented, with the reason). A case
  // whose geometry is invalid is accepted here: the runner reports it as INVALID.
  virtual Status supports(const Case& c) const = 0;

  // relu: the fused conv_bias_relu (forward y = relu(conv + b); backward through relu'
  // of the recomputed pre-activation).
  virtual Status conv_forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) = 0;
  virtual Status conv_backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) = 0;
  virtual Status pool_forward(const PoolGeometry& g, DType dtype, const PoolIO& io) = 0;
  virtual Status pool_backward(const PoolGeometry& g, DType dtype, const PoolIO& io) = 0;
  // Average pooling: io.x -> io.y, and io.dy -> io.dx (x and y are not passed to the
  // backward). unimplemented by default.
  virtual Status avgpool_forward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io);
  virtual Status avgpool_backward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io);

  // The backward split for the bench (unfused convs only): dx, dw or db alone, reading
  // what each needs of io. unimplemented where the engine cannot split.
  virtual Status conv_backward_data(const ConvGeometry& g, DType dtype, const ConvIO& io);
  virtual Status conv_backward_weight(const ConvGeometry& g, DType dtype, const ConvIO& io);
  virtual Status conv_backward_bias(const ConvGeometry& g, DType dtype, const ConvIO& io);

  // Queue every later call on `stream` (a cudaStream_t). Our kernels follow the
  // StreamScope of the caller (stream.h); a library with its own handle binds it here.
  virtual Status bind_stream(void* stream) {
    (void)stream;
    return ok_status();
  }
  // What the engine ran since it was made, for the bench report: kernel and tile, or the
  // library's algorithms by name.
  virtual std::string algorithm() const { return {}; }
  // Whether the weight gradient has a variant with float atomics (set_deterministic(false)).
  virtual bool has_atomic_weight_gradient() const { return false; }
  // Choose algorithms by timing them on the device (cuDNN's Find) instead of by
  // heuristics: what the bench's peer does, as a framework's benchmark mode would.
  void set_find_algorithms(bool on) { find_algorithms_ = on; }
  bool find_algorithms() const { return find_algorithms_; }

  // The guard bands of the engine's own scratch buffers (device_buffer.h).
  virtual Status check_guards() const { return ok_status(); }
  // Frees the scratch buffers (they grow back on demand), so that a measured run
  // counts the workspace it needs whatever ran before it.
  virtual void release_scratch() {}
  // The bytes of those scratch buffers now (the bench's workspace).
  virtual int64_t scratch_bytes() const { return 0; }

  // Weight gradient without float atomics (bitwise repeatable). Default: on.
  void set_deterministic(bool on) { deterministic_ = on; }
  bool deterministic() const { return deterministic_; }

 private:
  bool deterministic_ = true;
  bool find_algorithms_ = false;
};

// "64x64x32 tile, FFMA" (f32) or "..., WMMA" (f16, bf16): the direct kernels' implicit-GEMM
// tile (gemm_plan.h), as the bench and kcheck explain name it.
std::string gemm_tile_name(DType dtype);

// with_cutlass: `cuda`, else `cuda.direct` (cuda_engine.cpp).
std::unique_ptr<Engine> make_cuda_engine(bool with_cutlass = true);
#ifdef KC_HAVE_CUDNN
std::unique_ptr<Engine> make_cudnn_engine();
#endif
// By name ("cuda", "cuda.direct", "cudnn"); not_found for a name this build lacks.
StatusOr<std::unique_ptr<Engine>> make_engine(const std::string& name);

// Refusals both engines share: f64, tensors of 2^31 - 2^20 elements or more. ok for a case
// whose geometry does not resolve (invalid: not ours to refuse).
Status common_supports(const Case& c, const std::string& engine);

}  // namespace kc::gpu
