// cuDNN convolution calls for the cudnn engine: descriptors of one problem, and forward,
// backward-data and backward-filter through the legacy API with algorithm choice by
// cuDNN's heuristics (_v7), or by its Find (each candidate timed) for the bench's
// prepared ops (CudnnCall::find). The first algorithm that reports success is run, provided it
// is deterministic when asked, does not use tensor cores for f32 (TF32 would break the
// f32 tolerance model), and is neither FFT nor Winograd (their rounding is not bounded
// per output, as the tolerance model assumes; the peer's speed is therefore that of
// cuDNN's GEMM-class and direct algorithms).
// More on the method: docs/notes.md, section peers/cudnn/cudnn_conv.h.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cudnn_desc.h"
#include "kc/gpu/device_buffer.h"

namespace kc::gpu {

struct ConvDescs {
  std::string key;  // the problem: geometry, dtype and input extents as cuDNN sees them
  TensorDesc x;     // the input as cuDNN reads it (the padded tensor when pre-padded)
  TensorDesc y;
  TensorDesc b;  // [1, Cout, 1...] for the bias and its gradient
  FilterDesc w;
  ConvDesc conv;
};

// The descriptors of each problem seen, made once: a framework keeps them, and a
// benchmark's timed run must not time their creation. x_spatial: the input's spatial
// extents in cuDNN order; pad: per dim, cuDNN order.
using ConvDescCache = std::map<std::string, ConvDescs>;
StatusOr<const ConvDescs*> cached_conv_descs(const CudnnApi& api, ConvDescCache& cache, DType dtype,
                                             const ConvGeometry& g, const std::vector<int>& x_spatial,
                                             const std::vector<int>& pad);

// The algorithm that ran, per direction and problem (ConvDescs::key, determinism).
struct AlgoChoice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace_bytes = 0;  // as asked under `math` when it was chosen
  std::string name;            // "conv forward: IMPLICIT_GEMM, tensor ops", for the bench report
};
using AlgoCache = std::map<std::string, AlgoChoice>;

struct CudnnCall {
  const CudnnApi& api;
  cudnnHandle_t handle;
  DType dtype;
  bool deterministic;
  DeviceBuffer& workspace;
  AlgoCache& chosen;
  // Candidates ordered by cuDNN's Find (each timed on the device) instead of by its
  // heuristics: the bench's peer is cuDNN's best, under the same exclusions.
  bool find = false;
};

// y = conv(x, w); or, with init_y, y = conv(x, w) + (what init_y writes into y), the sum
// taken in f32 and rounded once to y's dtype (cuDNN's beta = 1 blend). init_y runs before
// every attempt, so that an algorithm that fails after writing part of y does not leave
// that part for the next one to add to.
Status cudnn_conv_forward(const CudnnCall& call, const ConvDescs& d, const void* x, const void* w, void* y,
                          const std::function<Status()>& init_y = {});
Status cudnn_conv_backward_data(const CudnnCall& call, const ConvDescs& d, const void* dy, const void* w, void* dx);
Status cudnn_conv_backward_filter(const CudnnCall& call, const ConvDescs& d, const void* x, const void* dy, void* dw);

}  // namespace kc::gpu
