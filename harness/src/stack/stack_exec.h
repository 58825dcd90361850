// The stack executor: runs a stack case forward and backward through any backend's
// per-layer ops (Backend::conv_forward / conv_backward / maxpool_forward /
// maxpool_backward), under a checkpoint policy, with exact host bookkeeping of
// recomputed layer forwards and the peak of activation bytes held (model in stack.h).
// Every layer output and gradient is rounded to the run's dtype, as a network stores
// its activations; with f64 the oracle's run is exact up to its own f64 arithmetic.
// More on the method: docs/notes.md, section harness/src/stack/stack_exec.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kc/backend.h"
#include "ops/stack/stack_runs.h"
#include "stack/stack.h"

namespace kc {

StatusOr<StackInputs> make_stack_inputs(const Case& c, const std::vector<StackLayer>& layers);

// A backend that is a ResidentStackRunner runs the stack itself (its memory measured);
// any other runs it through the executor here.
StackRun run_stack(Backend& backend, const std::vector<StackLayer>& layers, const StackInputs& in,
                   const StackRunOptions& options);

class CallAudit;  // one layer call's buffers held to the calling contract (stack_exec.cpp)

// The schedule's runtime (stack_schedule.h) on host tensors: a backend's per-layer
// calls, every output and gradient rounded to the run's dtype; dw, db (and conv_grads
// when asked for) stored into `run`, activations too when asked for. run_stack() uses
// it; a resident runner on the host may wrap it.
class HostStackRuntime {
 public:
  using Value = Tensor;
  using Indices = IndexTensor;
  HostStackRuntime(Backend& be, const std::vector<StackLayer>& layers, const StackInputs& in,
                   const StackRunOptions& opt, StackRun& run);
  Status forward(size_t l, const Tensor& x, Tensor& y, std::optional<IndexTensor>* keep);
  void output(size_t l, const Tensor& y);
  Status backward(size_t l, const Tensor& x, const IndexTensor* argmax, const Tensor& dy, Tensor& dx);
  uint64_t fingerprint(const Tensor& t) const;  // a digest of the element bits
  uint64_t fingerprint(const IndexTensor& t) const;
  // Every layer's w and b as they were when the run began (checked before each call that
  // reads them, too): a call that wrote into another layer's parameters fails the run.
  Status parameters_intact() const;

 private:
  const Tensor* bias(size_t l) const;
  Status parameters_unchanged(size_t l, const std::string& when) const;
  Status conv_inputs(size_t l, const Tensor& x, const char* call, CallAudit& audit) const;
  Backend& be_;
  const std::vector<StackLayer>& layers_;
  const StackInputs& in_;
  const StackRunOptions& opt_;
  StackRun& run_;
  std::vector<uint64_t> w_print_, b_print_;  // digests of in_.w[l], in_.b[l] at the start
};

// The backend's supports() for every layer's conv and pool case: a stack runs only
// through those calls. The first refusal, named by layer.
Status stack_supports(const Backend& backend, const std::vector<StackLayer>& layers);

}  // namespace kc
