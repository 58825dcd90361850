// What a stack run is given and returns (op: stack), in kc_core so that a backend
// library can run stacks itself: the harness's executor (stack/stack_exec.h) runs any
// backend's per-layer ops on host tensors; a backend that keeps activations in its own
// memory (the cuda backend: on the device) implements ResidentStackRunner, and
// run_stack() hands it the whole stack, so that its memory is measured, not modelled.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/status.h"
#include "kc/tensor.h"
#include "ops/stack/stack_layers.h"

namespace kc {

// x and dy filled as data.fill asks (uniform in [-1, 1) for every fill but normal);
// per layer w uniform with a He/Glorot scale (variance 2/fan_in with relu, 1/fan_in
// without) so activations neither vanish nor blow up over depth; b uniform in
// [-0.1, 0.1), zero when the case has no bias (a relu without bias runs fused with a
// zero bias). Everything rounded to the case dtype.
struct StackInputs {
  Tensor x;
  std::vector<Tensor> w, b;  // per layer; b empty-shaped when the layer has no bias
  Tensor dy;                 // cotangent of the last layer's output
};

struct StackRunOptions {
  CheckpointPolicy checkpoint;
  DType dtype = DType::kF64;
  bool backward = true;
  bool keep_activations = false;  // StackRun::activations (the first forward's outputs)
  bool keep_conv_grads = false;   // StackRun::conv_grads
};

struct StackRun {
  Status status = ok_status();  // the first error a backend returned, named by layer
  Tensor y;
  std::vector<Tensor> activations;  // a[1..depth], when asked for
  Tensor dx;
  std::vector<Tensor> dw, db;      // per layer; db only where the case has a bias
  std::vector<Tensor> conv_grads;  // per layer, when asked for: the cotangent of its conv's
                                   // output (after the pool's backward, before the relu's)
  int64_t recomputations = 0;      // layer forwards run again in the backward pass
  int64_t peak_bytes = 0;          // most activation bytes held at once (the plan's records)
  // Measured by a resident runner: the most bytes of its own memory held at once during
  // the step beyond the weights, biases and incoming cotangent (activations, argmaxes,
  // gradients in flight, workspace); -1 when nothing was measured.
  int64_t measured_peak_bytes = -1;
};

class ResidentStackRunner {
 public:
  virtual ~ResidentStackRunner() = default;
  virtual StackRun run_stack_resident(const std::vector<StackLayer>& layers, const StackInputs& in,
                                      const StackRunOptions& options) = 0;
};

}  // namespace kc
