// One run of a backend on a case under the calling contract of backend.h: outputs
// allocated with the contract's shapes and the case dtype and poisoned (NaN; indices
// kPoisonIndex) before the call. Used by the runner and by every check that needs to
// run an op again (on other inputs, another batch split, a padded input, ...).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/fill.h"
#include "kc/backend.h"
#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"
#include "ops/op_module.h"  // op_traits: what the callers ask of the case's op

namespace kc {

inline constexpr int64_t kPoisonIndex = std::numeric_limits<int64_t>::min();

// What every op's geometry has: its spatial dims, and x's and y's shapes.
const SpatialGeometry& spatial_of(const OpGeometry& g);
Dims x_shape_of(const OpGeometry& g);
Dims y_shape_of(const OpGeometry& g);

// Validates the case and resolves its geometry.
StatusOr<OpGeometry> op_geometry(const Case& c);

struct OpOutputs {
  Tensor y;
  std::optional<IndexTensor> indices;  // max pool in training mode
  Tensor dx, dw, db;                   // dw and db: conv only (db with a bias)
  Status forward;                      // what the backend returned
  Status backward;                     // not run: failed_precondition("not run")
  bool ran_backward = false;
  // Where the buffers of y, indices, dx, dw and db started when they were handed over
  // (null: not handed): integrity names a backend that replaced one instead of writing
  // into it.
  std::array<const void*, 5> handed{};
  // The inputs this call changed, with the call ("w in conv_backward"); empty: none.
  std::vector<std::string> wrote;
  // Hashes of y, indices, dx, dw and db as their call returned them (changed_after_return).
  std::array<uint64_t, 5> returned{};
};

// The outputs of `o` whose bits changed since their call returned ("y changed after the
// call returned"): a backend that still writes into them from another thread.
std::vector<std::string> changed_after_return(const OpOutputs& o);

enum class Pass { kForward, kForwardBackward };

// Runs the backend. A failed forward leaves the backward not run.
OpOutputs invoke(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in,
                 Pass pass = Pass::kForwardBackward);
// The two halves of invoke(), for checks that order calls themselves (state): the forward
// into o.y (and o.indices), which marks o's backward not run; the backward into o.dx,
// o.dw, o.db with o's own indices.
// Buffers o already holds with the right shape are poisoned and handed again in place,
// as an allocator reuses freed memory.
void invoke_forward(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, OpOutputs& o);
void invoke_backward(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, OpOutputs& o);

// Records, on this thread and while it lives, the inputs every invoke() saw a backend
// write into (OpOutputs::wrote), so that a check whose reruns compared runs on changed
// inputs says that first instead of a wrong cause (a race, a partial sum). Scopes nest.
class InputWriteWatch {
 public:
  InputWriteWatch();
  ~InputWriteWatch();
  InputWriteWatch(const InputWriteWatch&) = delete;
  InputWriteWatch& operator=(const InputWriteWatch&) = delete;
  const std::vector<std::string>& seen() const { return seen_; }
  void add(const std::vector<std::string>& wrote);

 private:
  InputWriteWatch* outer_;
  std::vector<std::string> seen_;
};

// The writes the innermost watch of this thread has seen (none without a watch).
std::vector<std::string> inputs_written_so_far();

// Records, on this thread and while it lives, the output buffers whose guard bands a call
// damaged ("dw in conv_backward: 1 element written past the end"). The runner opens one
// after its own call (which the integrity check judges), so that the runs the checks make
// of their own (per-sample, shape variants, padded inputs) are held to the same rule.
class GuardWatch {
 public:
  GuardWatch();
  ~GuardWatch();
  GuardWatch(const GuardWatch&) = delete;
  GuardWatch& operator=(const GuardWatch&) = delete;
  const std::vector<std::string>& seen() const { return seen_; }
  void add(const std::string& breach);

 private:
  GuardWatch* outer_;
  std::vector<std::string> seen_;
};

}  // namespace kc
