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
#include "kc/stack_run.h"

namespace kc {

StatusOr<StackInputs> make_stack_inputs(const Case& c, const std::vector<StackLayer>& layers);

// A backend that is a ResidentStackRunner runs the stack itself (its memory measured);
// any other runs it through the executor here.
StackRun run_stack(Backend& backend, const std::vector<StackLayer>& layers, const StackInputs& in,
                   const StackRunOptions& options);

// The backend's supports() for every layer's conv and pool case: a stack runs only
// through those calls. The first refusal, named by layer.
Status stack_supports(const Backend& backend, const std::vector<StackLayer>& layers);

}  // namespace kc
