// The state check's comparison of a result with a fresh call's on the same inputs
// (docs/checks.md, "state"): bitwise when the case says `deterministic: true`, else within
// twice the tolerance at the oracle's value, the allowance for summation order. A backend
// whose sums run in a varying order (float atomics) is thereby never said to read state:
// two fresh calls that happen to agree prove nothing about the next one. The oracle on
// the compared inputs is computed only when two results differ bitwise. The determinism
// check's refill judges with it too.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "common.h"
#include "findings.h"
#include "judge/absolute_pass.h"

namespace kc::checks::state {

using namespace rules;  // num, at, bit_diff, Findings: the rule checks' helpers

inline const char* how_compared(bool bitwise) {
  return bitwise ? "bitwise (deterministic: true)" : "within twice the tolerance (summation order may vary)";
}

class Judge {
 public:
  // The results compared were computed on (c, geo, in); ctx is the check's (its backend,
  // whether it is the oracle). ref and abs: the oracle on these inputs when already known.
  // bitwise: compare bits (the case says deterministic: true) or within the allowance.
  Judge(const CheckContext& ctx, bool bitwise, const Case& c, const OpGeometry& geo, const OpInputs& in,
        const OpOutputs* ref = nullptr, const OpOutputs* abs = nullptr)
      : ctx_(ctx), bitwise_(bitwise), c_(c), geo_(geo), in_(in), ref_(ref), abs_(abs) {}
  Judge(const Judge&) = delete;  // ref_ may point into this object
  Judge& operator=(const Judge&) = delete;

  bool bitwise() const { return bitwise_; }
  // Indices are the contract's under tie first and last, whatever the order of sums.
  bool indices_fixed() const {
    const auto* pool = std::get_if<MaxPoolParams>(&c_.op);
    return bitwise() || (pool != nullptr && pool->tie != TieRule::kAny);
  }
  const char* how() const { return how_compared(bitwise()); }

  // Per element, whether `got` lies farther than twice the tolerance from `fresh` at the
  // oracle's value; empty where the sizes of got, fresh and the oracle's tensor differ.
  std::vector<char> beyond_allowance(std::string_view name, const Tensor& got, const Tensor& fresh) const {
    if (got.size() != fresh.size()) return {};
    const Tensor &r = output_named(oracle(), name), &a = output_named(*abs_, name);
    if (r.size() != got.size() || a.size() != got.size()) return {};
    const CheckContext here{c_, geo_, in_, ctx_.backend, ctx_.is_reference, *ref_, *abs_, *ref_};
    const ToleranceSpec spec = tolerance_for(here, name);
    std::vector<char> out(static_cast<size_t>(got.size()), 0);
    for (int64_t i = 0; i < got.size(); ++i)
      out[static_cast<size_t>(i)] = !rules::within(got[i], fresh[i], 2.0 * element_bound(spec, std::abs(r[i]), a[i]));
    return out;
  }

  // The elements of `got` that are not the same as `fresh`'s (a size change counts).
  BitDiff mismatch(std::string_view name, const Tensor& got, const Tensor& fresh) const {
    BitDiff d = bit_diff(got.data, fresh.data);
    if (d.count == 0 || bitwise()) return d;
    const std::vector<char> beyond = beyond_allowance(name, got, fresh);
    if (beyond.empty()) return d;
    BitDiff out;
    for (int64_t i = 0; i < got.size(); ++i) {
      if (!beyond[static_cast<size_t>(i)]) continue;
      if (out.count++ == 0) out.first = i;
      if (std::isfinite(got[i]) && std::isfinite(fresh[i]))
        out.max_abs = std::max(out.max_abs, std::abs(got[i] - fresh[i]));
    }
    return out;
  }

 private:
  const OpOutputs& oracle() const {
    if (ref_ == nullptr) {
      auto reference = make_reference_backend();
      own_ref_ = invoke(*reference, c_, geo_, in_);
      own_abs_ = absolute_pass_for(ctx_.backend, c_, geo_, in_, *own_ref_);
      ref_ = &*own_ref_;
      abs_ = &*own_abs_;
    }
    return *ref_;
  }

  const CheckContext& ctx_;
  bool bitwise_;
  const Case& c_;
  const OpGeometry& geo_;
  const OpInputs& in_;
  mutable const OpOutputs* ref_;
  mutable const OpOutputs* abs_;
  mutable std::optional<OpOutputs> own_ref_, own_abs_;
};

// One result of the sequence against its fresh call.
// Whether the backend's fresh calls on the case's inputs differ from each other (up to
// three more calls against the runner's): then a bitwise difference in the sequence is
// its nondeterminism, which the determinism check reports, not state.
inline bool shows_nondeterminism(const CheckContext& ctx) {
  for (int i = 0; i < 3; ++i) {
    const OpOutputs again = invoke(ctx.backend, ctx.c, ctx.geo, ctx.in);
    if (!bitwise_equal(again.y, ctx.cand.y) || !bitwise_equal(again.dx, ctx.cand.dx) ||
        !bitwise_equal(again.dw, ctx.cand.dw) || !bitwise_equal(again.db, ctx.cand.db))
      return true;
  }
  return false;
}

inline void compare(const Judge& j, const std::string& call, const char* name, const Tensor& got, const Tensor& fresh,
                    Findings& f, CheckResult& r) {
  if (got.size() == 0 && fresh.size() == 0) return;
  const BitDiff d = j.mismatch(name, got, fresh);
  if (d.count == 0) return;
  std::string msg =
      call + ": " + name + " differs from a fresh call's at " + num(d.count) + " of " + num(fresh.size()) + " elements";
  if (d.first >= 0 && d.first < got.size() && d.first < fresh.size()) {
    msg += " (first at " + at(d.first, fresh.shape) + ": " + num_exact(got[d.first]) + ", fresh " +
           num_exact(fresh[d.first]) + ")";
    if (r.worst.size() < 5) r.worst.push_back({name, unravel(d.first, fresh.shape), got[d.first], fresh[d.first], 0.0});
  }
  r.max_abs_error = std::max(r.max_abs_error, d.max_abs);
  f.add(call + name, msg);
}

inline void compare_indices(const std::string& call, const OpOutputs& got, const OpOutputs& fresh, Findings& f) {
  if (!got.indices || !fresh.indices || got.indices->data == fresh.indices->data) return;
  f.add(call + "indices", call + ": indices differ from a fresh call's");
}

inline void compare_status(const std::string& call, const Status& got, const Status& fresh, Findings& f) {
  if (got.ok() || !fresh.ok()) return;
  f.add(call + "status", call + " returned " + got.to_string() + " where a fresh call succeeded");
}

inline void compare_forward(const Judge& j, const std::string& call, const OpOutputs& got, const OpOutputs& fresh,
                            Findings& f, CheckResult& r) {
  compare_status(call, got.forward, fresh.forward, f);
  if (!got.forward.ok() || !fresh.forward.ok()) return;
  compare(j, call, "y", got.y, fresh.y, f, r);
  if (j.indices_fixed()) compare_indices(call, got, fresh, f);
}

inline void compare_backward(const Judge& j, const std::string& call, const OpOutputs& got, const OpOutputs& fresh,
                             Findings& f, CheckResult& r) {
  compare_status(call, got.backward, fresh.backward, f);
  if (!got.backward.ok() || !fresh.backward.ok()) return;
  compare(j, call, "dx", got.dx, fresh.dx, f, r);
  compare(j, call, "dw", got.dw, fresh.dw, f, r);
  compare(j, call, "db", got.db, fresh.db, f, r);
}

}  // namespace kc::checks::state
