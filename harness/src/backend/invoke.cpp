// invoke(): the calling contract applied around one forward and backward of a backend.
#include "backend/invoke.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include "backend/candidate_call.h"
#include "backend/op_call.h"

namespace kc {
namespace {

thread_local InputWriteWatch* current_watch = nullptr;
thread_local GuardWatch* current_guard_watch = nullptr;

// A hash of a tensor's bits: an input the backend changed has another one (whatever the
// change, up to a collision of 2^-64).
uint64_t fingerprint(const Tensor& t) {
  uint64_t h = 0xcbf29ce484222325ULL ^ static_cast<uint64_t>(t.size());
  for (int64_t i = 0; i < t.size(); ++i) h = (h ^ std::bit_cast<uint64_t>(t[i])) * 0x100000001b3ULL;
  return h;
}

// The hashes changed_after_return compares with, in OpOutputs::returned's order.
std::array<uint64_t, 5> output_prints(const OpOutputs& o) {
  return {digest(o.y.data), o.indices ? digest(o.indices->data) : 0, digest(o.dx.data), digest(o.dw.data),
          digest(o.db.data)};
}

// Records the hashes of the outputs as a call returned them: a forward all five (dx, dw
// and db as the backward, not run yet, will find them), a backward its own dx, dw and
// db, so that y keeps the hash of when the forward returned.
void mark_returned(OpOutputs& o, bool forward) {
  const std::array<uint64_t, 5> now = output_prints(o);
  for (size_t i = forward ? 0 : 2; i < 5; ++i) o.returned[i] = now[i];
}

// Tells the innermost GuardWatch which outputs handed to `call` (a forward's y and
// indices, a backward's dx, dw and db) it wrote outside of; a buffer the backend
// replaced is the integrity check's to name.
void note_breaches(const char* call, const OpOutputs& o, bool forward) {
  if (current_guard_watch == nullptr) return;
  const auto look = [&](const char* name, const auto& v, size_t slot) {
    if (static_cast<const void*>(v.data()) != o.handed[slot] || v.data() == nullptr) return;
    const GuardDamage d = guard_damage(v);
    if (!d.intact()) current_guard_watch->add(std::string(name) + " in " + call + ": " + describe_guard_damage(v, d));
  };
  if (forward) {
    look("y", o.y.data, 0);
    if (o.indices) look("indices", o.indices->data, 1);
  } else {
    look("dx", o.dx.data, 2);
    look("dw", o.dw.data, 3);
    look("db", o.db.data, 4);
  }
}

}  // namespace

// Notes in o.wrote which of the inputs changed during `call`.
class InputGuard {
 public:
  explicit InputGuard(const OpInputs& in) : in_(in), prints_(prints(in)) {}
  void after(const char* call, OpOutputs& o) {
    const std::array<uint64_t, 4> now = prints(in_);
    static const std::array<const char*, 4> names = {"x", "w", "b", "dy"};
    std::vector<std::string> wrote;
    for (size_t i = 0; i < now.size(); ++i) {
      if (now[i] != prints_[i]) wrote.push_back(std::string(names[i]) + " in " + call);
    }
    prints_ = now;
    if (wrote.empty()) return;
    o.wrote.insert(o.wrote.end(), wrote.begin(), wrote.end());
    if (current_watch != nullptr) current_watch->add(wrote);
  }

 private:
  static std::array<uint64_t, 4> prints(const OpInputs& in) {
    return {fingerprint(in.x), fingerprint(in.w), fingerprint(in.b), fingerprint(in.dy)};
  }
  const OpInputs& in_;
  std::array<uint64_t, 4> prints_;
};

namespace {

// Poisons t for a call, in place where it already has the shape: a buffer an earlier call
// used, handed on as an allocator would.
void poison(Tensor& t, DType dtype, const Dims& shape) {
  Tensor p = poisoned(dtype, shape);
  if (t.shape == shape && t.size() == p.size()) {
    std::copy(p.data.begin(), p.data.end(), t.data.begin());
  } else {
    t = std::move(p);
  }
}

void poison_indices(std::optional<IndexTensor>& t, const Dims& shape) {
  if (!t || t->shape != shape) t = IndexTensor{shape, HostVector<int64_t>(static_cast<size_t>(element_count(shape)))};
  std::fill(t->data.begin(), t->data.end(), kPoisonIndex);
}

}  // namespace

OpCall::OpCall(Backend& backend, const char* call, bool forward, const OpInputs& in, OpOutputs& o)
    : backend_(backend), call_(call), forward_(forward), o_(o) {
  guard_ = std::make_unique<InputGuard>(in);
}
OpCall::~OpCall() = default;

void OpCall::hand(Tensor& t, size_t slot, DType dtype, const Dims& shape) {
  poison(t, dtype, shape);
  o_.handed[slot] = t.data.data();
}

void OpCall::hand_indices(const Dims& shape) {
  poison_indices(o_.indices, shape);
  o_.handed[1] = o_.indices->data.data();
}

void OpCall::finish(Status status) {
  (forward_ ? o_.forward : o_.backward) = std::move(status);
  guard_->after(call_, o_);
  if (!forward_) o_.ran_backward = true;
  mark_returned(o_, forward_);
  note_breaches(call_, o_, forward_);
}

InputWriteWatch::InputWriteWatch() : outer_(current_watch) { current_watch = this; }
InputWriteWatch::~InputWriteWatch() {
  current_watch = outer_;
  if (outer_ != nullptr) outer_->add(seen_);
}
void InputWriteWatch::add(const std::vector<std::string>& wrote) {
  for (const std::string& w : wrote) {
    if (std::find(seen_.begin(), seen_.end(), w) == seen_.end()) seen_.push_back(w);
  }
}

GuardWatch::GuardWatch() : outer_(current_guard_watch) { current_guard_watch = this; }
GuardWatch::~GuardWatch() {
  current_guard_watch = outer_;
  for (const std::string& b : seen_) {
    if (outer_ != nullptr) outer_->add(b);
  }
}
void GuardWatch::add(const std::string& breach) {
  if (std::find(seen_.begin(), seen_.end(), breach) == seen_.end()) seen_.push_back(breach);
}

std::vector<std::string> inputs_written_so_far() {
  return current_watch != nullptr ? current_watch->seen() : std::vector<std::string>{};
}

std::vector<std::string> changed_after_return(const OpOutputs& o) {
  static const char* const names[] = {"y", "indices", "dx", "dw", "db"};
  const std::array<uint64_t, 5> now = output_prints(o);
  std::vector<std::string> changed;
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i] != o.returned[i]) {
      changed.push_back(std::string(names[i]) + " changed after the call returned: the backend still wrote into it");
    }
  }
  return changed;
}

const SpatialGeometry& spatial_of(const OpGeometry& g) {
  return std::visit([](const auto& og) -> const SpatialGeometry& { return og.spatial; }, g);
}
Dims x_shape_of(const OpGeometry& g) {
  return std::visit([](const auto& og) { return og.x_shape(); }, g);
}
Dims y_shape_of(const OpGeometry& g) {
  return std::visit([](const auto& og) { return og.y_shape(); }, g);
}

StatusOr<OpGeometry> op_geometry(const Case& c) {
  return std::visit([&](const auto& p) { return geometry_of(c, p); }, c.op);
}

void invoke_forward(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, OpOutputs& o) {
  o.backward = failed_precondition("not run");
  o.ran_backward = false;
  std::visit([&](const auto& og) { forward_into(backend, c, og, in, o); }, g);
}

void invoke_backward(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, OpOutputs& o) {
  std::visit([&](const auto& og) { backward_into(backend, c, og, in, o); }, g);
}

OpOutputs invoke(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, Pass pass) {
  OpOutputs o;
  invoke_forward(backend, c, g, in, o);
  if (o.forward.ok() && pass == Pass::kForwardBackward) invoke_backward(backend, c, g, in, o);
  return o;
}

}  // namespace kc
