// The stack executor: runs a stack case forward and backward through any backend's
// per-layer ops (Backend::conv_forward / conv_backward / maxpool_forward /
// maxpool_backward), under a checkpoint policy, with exact host bookkeeping of
// recomputed layer forwards and the peak of activation bytes held (model in stack.h).
// Every layer output and gradient is rounded to the run's dtype, as a network stores
// its activations; with f64 the oracle's run is exact up to its own f64 arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/backend.h"
#include "kc/stack.h"

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

StatusOr<StackInputs> make_stack_inputs(const Case& c, const std::vector<StackLayer>& layers);

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
  std::vector<Tensor> dw, db;       // per layer; db only where the case has a bias
  std::vector<Tensor> conv_grads;   // per layer, when asked for: the cotangent of its conv's
                                    // output (after the pool's backward, before the relu's)
  int64_t recomputations = 0;       // layer forwards run again in the backward pass
  int64_t peak_bytes = 0;           // most activation bytes held at once
};

StackRun run_stack(Backend& backend, const std::vector<StackLayer>& layers, const StackInputs& in,
                   const StackRunOptions& options);

// The backend's supports() for every layer's conv and pool case: a stack runs only
// through those calls. The first refusal, named by layer.
Status stack_supports(const Backend& backend, const std::vector<StackLayer>& layers);

}  // namespace kc
