// The checkpoint schedule of a stack's training step, independent of where tensors
// live: the harness's executor runs it on host tensors through a Backend's per-layer
// calls (stack_exec.cpp), the cuda backend on device buffers through its engine. The
// order of calls, the records kept, the recomputations and the bookkeeping of held
// activation bytes (the plan of stack.h) are therefore the same everywhere.
//
// The runtime Rt gives the types Value (an activation or cotangent; destroying it frees
// it) and Indices (a max pool's argmax) and the calls forward, output and backward per
// layer; with fingerprint() too (FingerprintingRuntime) the schedule checks that every
// record it hands back is what it kept, so a call that wrote into a buffer it was not
// handed fails the run, named by the layer. The requirements in full: docs/notes.md,
// section harness/src/stack/stack_schedule.h.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/stack/stack_runs.h"
#include "stack/stack.h"

namespace kc {

// A runtime whose records the schedule fingerprints. A runtime that means to offer it
// static_asserts it, so that a changed signature cannot switch the checks off silently.
template <class Rt>
concept FingerprintingRuntime = requires(Rt& rt, const typename Rt::Value& v, const typename Rt::Indices& i) {
  { rt.fingerprint(v) } -> std::convertible_to<uint64_t>;
  { rt.fingerprint(i) } -> std::convertible_to<uint64_t>;
};

template <class Rt>
class StackSchedule {
 public:
  using Value = typename Rt::Value;
  using Indices = typename Rt::Indices;

  StackSchedule(Rt& rt, const std::vector<StackLayer>& layers, const StackRunOptions& options, StackRun& run)
      : rt_(rt), layers_(layers), opt_(options), run_(run) {}

  // x: the stack's input; y: its output; g: the cotangent of y on entry, dx on return
  // (untouched without a backward pass). run.recomputations and run.peak_bytes counted.
  Status run(Value x, Value& y, Value& g) {
    const int64_t depth = static_cast<int64_t>(layers_.size());
    k_ = checkpoint_segment(opt_.checkpoint, depth);
    segments_ = (depth + k_ - 1) / k_;
    records_.clear();
    records_.resize(layers_.size());
    KC_RETURN_IF_ERROR(forward_all(std::move(x), y));
    if (!opt_.backward) return ok_status();
    for (int64_t seg = segments_ - 1; seg >= 0; --seg) {
      const size_t first = static_cast<size_t>(seg * k_), last = static_cast<size_t>(std::min(depth, (seg + 1) * k_));
      if (seg != segments_ - 1) KC_RETURN_IF_ERROR(recompute_keeping(first, last, g));
      for (size_t l = last; l-- > first;) {
        KC_RETURN_IF_ERROR(unchanged(l, "its backward"));
        Value dx;
        const Indices* argmax = records_[l].indices ? &*records_[l].indices : nullptr;
        KC_RETURN_IF_ERROR(rt_.backward(l, *records_[l].input, argmax, g, dx));
        g = std::move(dx);
        release(record_bytes(layers_[l], opt_.dtype));
        records_[l] = {};
      }
    }
    return ok_status();
  }

 private:
  struct Record {
    std::optional<Value> input;
    std::optional<Indices> indices;
    uint64_t input_print = 0, indices_print = 0;  // fingerprints when kept (seal())
  };

  static constexpr bool kFingerprints = FingerprintingRuntime<Rt>;

  // Fingerprints of what layer l's record keeps: its input as soon as it is stored
  // (before the layer's own calls, which may not write into it either), its argmax once
  // the forward has filled it.
  void seal_input(size_t l) {
    if constexpr (kFingerprints) records_[l].input_print = rt_.fingerprint(*records_[l].input);
  }
  void seal_indices(size_t l) {
    if constexpr (kFingerprints) {
      if (records_[l].indices) records_[l].indices_print = rt_.fingerprint(*records_[l].indices);
    }
  }

  // Whether layer l's record is still what seal() saw, before `use` reads it.
  Status unchanged(size_t l, const char* use) {
    if constexpr (kFingerprints) {
      const Record& r = records_[l];
      const char* what = r.input && rt_.fingerprint(*r.input) != r.input_print         ? "input"
                         : r.indices && rt_.fingerprint(*r.indices) != r.indices_print ? "max pool's argmax"
                                                                                       : nullptr;
      if (what != nullptr) {
        return at_stack_layer(
            l, failed_precondition(
                   std::string("the saved ") + what + " kept for " + use +
                   " changed while it was kept, and no call was handed it to write: a call wrote into a buffer it "
                   "was not handed (an earlier layer's activation is live until the backward pass)"));
      }
    }
    return ok_status();
  }

  int64_t input_bytes(size_t l) const {
    return element_count(layers_[l].in_shape()) * static_cast<int64_t>(storage_bytes(opt_.dtype));
  }
  void hold(int64_t bytes) {
    held_ += bytes;
    run_.peak_bytes = std::max(run_.peak_bytes, held_);
  }
  void release(int64_t bytes) { held_ -= bytes; }

  // The last segment keeps whole records; earlier segments only their checkpoint's
  // input. An input that is not kept is freed once its layer has run.
  Status forward_all(Value a, Value& y) {
    for (size_t l = 0; l < layers_.size(); ++l) {
      const int64_t seg = static_cast<int64_t>(l) / k_;
      const bool full = seg == segments_ - 1;
      const Value* in = &a;
      if (full || static_cast<int64_t>(l) == seg * k_) {
        records_[l].input = std::move(a);
        in = &*records_[l].input;
        seal_input(l);
        hold(full ? record_bytes(layers_[l], opt_.dtype) : input_bytes(l));
      }
      Value out;
      KC_RETURN_IF_ERROR(rt_.forward(l, *in, out, full && opt_.backward ? &records_[l].indices : nullptr));
      seal_indices(l);
      rt_.output(l, out);
      a = std::move(out);
    }
    y = std::move(a);
    return ok_status();
  }

  // recompute(), with the cotangent g held across it fingerprinted: no recomputing call
  // is handed g, so a change is a write into a buffer it was not handed (an engine that
  // takes the last backward's output for dead and uses it as workspace).
  Status recompute_keeping(size_t first, size_t last, const Value& g) {
    if constexpr (kFingerprints) {
      const uint64_t print = rt_.fingerprint(g);
      KC_RETURN_IF_ERROR(recompute(first, last));
      if (rt_.fingerprint(g) != print) {
        return at_stack_layer(
            last - 1, failed_precondition("the cotangent of its output, held for its backward, changed while layers " +
                                          std::to_string(first + 1) + ".." + std::to_string(last) +
                                          " were recomputed, and no call was handed it to write: a call wrote "
                                          "into a buffer it was not handed (the gradient carried back is live until "
                                          "the next backward reads it)"));
      }
      return ok_status();
    } else {
      return recompute(first, last);
    }
  }

  // Layers [first, last) again from the checkpoint at first, keeping every record. The
  // segment's output (the input of layer `last`, whose record the later segment's
  // backward has freed) is not needed and is dropped: layer last-1 runs again for its
  // record's argmax, and the plan counts it. On a device that output is a transient of
  // the recomputation, in the measured peak and not in the plan's.
  Status recompute(size_t first, size_t last) {
    KC_RETURN_IF_ERROR(unchanged(first, "its recomputation"));
    release(input_bytes(first));
    std::optional<Value> t;
    for (size_t l = first; l < last; ++l) {
      if (l != first) {
        records_[l].input = std::move(*t);
        seal_input(l);
      }
      hold(record_bytes(layers_[l], opt_.dtype));
      Value out;
      KC_RETURN_IF_ERROR(rt_.forward(l, *records_[l].input, out, &records_[l].indices));
      seal_indices(l);
      ++run_.recomputations;
      t = std::move(out);
    }
    return ok_status();
  }

  Rt& rt_;
  const std::vector<StackLayer>& layers_;
  const StackRunOptions& opt_;
  StackRun& run_;
  std::vector<Record> records_;
  int64_t k_ = 1, segments_ = 1, held_ = 0;
};

}  // namespace kc
