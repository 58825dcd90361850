// A resident stack runner on the host, for tests and the trap zoo: the checkpoint
// schedule (stack_schedule.h) on move-only buffers whose bytes are counted while they
// live, as a GPU backend's device buffers are, around a backend's per-layer calls
// (HostStackRuntime). Three planted bugs for the trap zoo (CountedBug): kLeak, freed
// buffers stay counted, as with an allocator that never gives memory back, so
// checkpointing saves nothing measurable; kNextLayersIndices, a layer's pool backward is
// handed the argmax offsets last kept for the layer after it (an engine that indexes its
// per-layer offsets buffers with l + 1), the same way under every policy;
// kCheckpointAsWorkspace, a forward that keeps no argmax (the inference path, which
// the schedule takes before a checkpoint's segment is recomputed) treats its input as
// dead once it has run and uses it as workspace, so the checkpoint the recomputation
// starts from is overwritten. The records are fingerprinted as the host runtime's are.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "stack/stack_exec.h"
#include "stack/stack_schedule.h"

namespace kc::test {

enum class CountedBug { kNone, kLeak, kNextLayersIndices, kCheckpointAsWorkspace };

struct MemoryCounter {
  int64_t current = 0, peak = 0;
  bool leak = false;
  void add(int64_t bytes) {
    current += bytes;
    peak = std::max(peak, current);
  }
};

// A tensor whose storage bytes are counted while it lives; move-only.
class Counted {
 public:
  Counted() = default;
  Counted(Tensor t, MemoryCounter* c) : t_(std::move(t)), c_(c) { c_->add(bytes()); }
  Counted(Counted&& o) noexcept : t_(std::move(o.t_)), c_(std::exchange(o.c_, nullptr)) {}
  Counted& operator=(Counted&& o) noexcept {
    if (this != &o) {
      release();
      t_ = std::move(o.t_);
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  ~Counted() { release(); }
  const Tensor& tensor() const { return t_; }

 private:
  int64_t bytes() const { return t_.size() * static_cast<int64_t>(storage_bytes(t_.dtype)); }
  void release() {
    if (c_ != nullptr && !c_->leak) c_->current -= bytes();
    c_ = nullptr;
  }
  Tensor t_;
  MemoryCounter* c_ = nullptr;
};

class CountedRuntime {
 public:
  using Value = Counted;
  using Indices = IndexTensor;
  CountedRuntime(HostStackRuntime& host, MemoryCounter& counter, CountedBug bug)
      : host_(host), counter_(counter), bug_(bug) {}
  Counted make(Tensor t) { return Counted(std::move(t), &counter_); }
  Status forward(size_t l, const Counted& x, Counted& y, std::optional<IndexTensor>* keep) {
    Tensor out;
    KC_RETURN_IF_ERROR(host_.forward(l, x.tensor(), out, keep));
    y = make(std::move(out));
    if (bug_ == CountedBug::kNextLayersIndices && keep != nullptr && keep->has_value()) kept_[l] = **keep;
    if (bug_ == CountedBug::kCheckpointAsWorkspace && keep == nullptr) {
      Tensor& dead = const_cast<Tensor&>(x.tensor());  // the kCheckpointAsWorkspace bug
      std::fill(dead.data.begin(), dead.data.end(), 0.0);
    }
    return ok_status();
  }
  void output(size_t l, const Counted& y) { host_.output(l, y.tensor()); }
  uint64_t fingerprint(const Counted& v) const { return host_.fingerprint(v.tensor()); }
  uint64_t fingerprint(const IndexTensor& i) const { return host_.fingerprint(i); }
  Status backward(size_t l, const Counted& x, const IndexTensor* argmax, const Counted& dy, Counted& dx) {
    if (auto next = kept_.find(l + 1);
        argmax != nullptr && next != kept_.end() && next->second.shape == argmax->shape) {
      argmax = &next->second;  // the kNextLayersIndices bug
    }
    Tensor g;
    KC_RETURN_IF_ERROR(host_.backward(l, x.tensor(), argmax, dy.tensor(), g));
    dx = make(std::move(g));
    return ok_status();
  }

 private:
  HostStackRuntime& host_;
  MemoryCounter& counter_;
  CountedBug bug_;
  std::map<size_t, IndexTensor> kept_;  // kNextLayersIndices: the last offsets kept per layer
};

static_assert(FingerprintingRuntime<CountedRuntime>);

// The whole step with `ops`'s per-layer calls; measured_peak_bytes counts from x on
// (the incoming cotangent is not the step's own), as the GPU backends measure.
inline StackRun run_counted(Backend& ops, const std::vector<StackLayer>& layers, const StackInputs& in,
                            const StackRunOptions& options, CountedBug bug = CountedBug::kNone) {
  StackRun run;
  MemoryCounter counter;
  HostStackRuntime host(ops, layers, in, options, run);
  CountedRuntime rt(host, counter, bug);
  StackSchedule<CountedRuntime> schedule(rt, layers, options, run);
  Counted y, g = rt.make(in.dy);
  counter = MemoryCounter{0, 0, bug == CountedBug::kLeak};
  run.status = schedule.run(rt.make(in.x), y, g);
  if (run.status.ok()) run.status = host.parameters_intact();
  if (!run.status.ok()) return run;
  run.y = y.tensor();
  if (options.backward) run.dx = g.tensor();
  run.measured_peak_bytes = counter.peak;
  return run;
}

}  // namespace kc::test
