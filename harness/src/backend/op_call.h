// One call of a backend's op under the calling contract (invoke.h), as each op module's
// `<op>_backend.cpp` makes it (forward_into, backward_into): the outputs poisoned and
// handed, the call run through candidate_call, then what it wrote into its inputs, the
// hashes of its outputs as it returned them and its writes outside them recorded.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "backend/candidate_call.h"
#include "backend/invoke.h"

namespace kc {

class InputGuard;

class OpCall {
 public:
  // `call`: the backend function's name ("avgpool_forward"); `forward`: the call makes a
  // forward's outputs (y, indices), else a backward's (dx, dw, db).
  OpCall(Backend& backend, const char* call, bool forward, const OpInputs& in, OpOutputs& o);
  ~OpCall();
  OpCall(const OpCall&) = delete;
  OpCall& operator=(const OpCall&) = delete;

  // Poisons `t` to `shape` (in place where it has it: a buffer an earlier call used,
  // handed on as an allocator would) and records it handed in OpOutputs::handed[slot]
  // (0 y, 2 dx, 3 dw, 4 db).
  void hand(Tensor& t, size_t slot, DType dtype, const Dims& shape);
  // The same for the output's indices (slot 1).
  void hand_indices(const Dims& shape);

  // Runs `call` (returning the backend's Status) and records its result and effects.
  template <class Call>
  void run(Call&& call) {
    finish(candidate_call(backend_, call_, std::forward<Call>(call)));
  }

 private:
  void finish(Status status);
  Backend& backend_;
  const char* call_;
  bool forward_;
  OpOutputs& o_;
  std::unique_ptr<InputGuard> guard_;
};

}  // namespace kc
