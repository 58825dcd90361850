// state: results do not depend on earlier calls (docs/checks.md, "Notes on individual checks"). The backend runs
//   forward(A), forward(B), backward(A), backward(B), forward(A)
// where A is the case's inputs and B other data of the same shapes, every output in a
// buffer poisoned before its call, and the last forward(A) written into the buffers
// forward(B) had (as an allocator hands freed memory to the next tensor). A backward
// gets its own forward's indices, never the latest ones. Each result must equal a fresh
// call on its own inputs: bitwise where two fresh calls on A agree bitwise, else within
// twice the tolerance of the oracle's value. A kernel that keeps the relu mask, the
// argmax indices or any workspace of the last forward and reads it in a backward (or the
// next forward) gives backward(A) B's routing: "backward read state left by another call".
#include <algorithm>
#include <optional>

#include "check_list.h"
#include "common.h"
#include "findings.h"
#include "judge/absolute_pass.h"

namespace kc::checks {

using namespace rules;
namespace {

constexpr const char* kName = "state";

// B: the case's data with the next seed, with x and dy negated where that leaves them as
// they were (inline data), so that max pool picks other elements and relu other signs.
StatusOr<OpInputs> other_inputs(const CheckContext& ctx) {
  Case c = ctx.c;
  c.data.seed += 1;
  KC_ASSIGN_OR_RETURN(OpInputs b, make_inputs(c));
  for (Tensor* t : {&b.x, &b.dy}) {
    const Tensor& a = t == &b.x ? ctx.in.x : ctx.in.dy;
    if (!bitwise_equal(*t, a)) continue;
    for (double& v : t->data) v = -v;
  }
  return b;
}

bool has_backward(const CheckContext& ctx) {
  const PoolGeometry* g = pool_geo(ctx);
  return ctx.cand.ran_backward && ctx.cand.backward.ok() && (g == nullptr || g->mode == PoolMode::kTraining);
}

// How results are compared with their fresh calls: bitwise, or (a backend whose two
// fresh calls on A differ) within twice the tolerance at the oracle's value.
struct Judge {
  const CheckContext* ctx;
  bool bitwise = true;
  const OpOutputs* ref = nullptr;  // the oracle on the inputs compared, with its absolute pass
  const OpOutputs* abs = nullptr;
  bool same(const char* name, const Tensor& got, const Tensor& fresh) const {
    if (bitwise || ref == nullptr) return bit_diff(got.data, fresh.data).count == 0 && got.shape == fresh.shape;
    const Tensor &r = output(*ref, name), &a = output(*abs, name);
    if (got.size() != fresh.size() || r.size() != got.size() || a.size() != got.size()) return false;
    const ToleranceSpec spec = tolerance_for(*ctx, name);
    for (int64_t i = 0; i < got.size(); ++i) {
      if (!within(got[i], fresh[i], 2.0 * element_bound(spec, std::abs(r[i]), a[i]))) return false;
    }
    return true;
  }
  static const Tensor& output(const OpOutputs& o, std::string_view name) {
    return name == "y" ? o.y : name == "dx" ? o.dx : name == "dw" ? o.dw : o.db;
  }
};

// One result of the sequence against its fresh call.
void compare(const Judge& j, const std::string& call, const char* name, const Tensor& got, const Tensor& fresh,
             Findings& f, CheckResult& r) {
  if ((got.size() == 0 && fresh.size() == 0) || j.same(name, got, fresh)) return;
  const BitDiff d = bit_diff(got.data, fresh.data);
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

void compare_indices(const std::string& call, const OpOutputs& got, const OpOutputs& fresh, Findings& f) {
  if (!got.indices || !fresh.indices || got.indices->data == fresh.indices->data) return;
  f.add(call + "indices", call + ": indices differ from a fresh call's");
}

void compare_status(const std::string& call, const Status& got, const Status& fresh, Findings& f) {
  if (got.ok() || !fresh.ok()) return;
  f.add(call + "status", call + " returned " + got.to_string() + " where a fresh call succeeded");
}

void compare_forward(const Judge& j, const std::string& call, const OpOutputs& got, const OpOutputs& fresh, Findings& f,
                     CheckResult& r) {
  compare_status(call, got.forward, fresh.forward, f);
  if (!got.forward.ok() || !fresh.forward.ok()) return;
  compare(j, call, "y", got.y, fresh.y, f, r);
  if (j.bitwise) compare_indices(call, got, fresh, f);
}

void compare_backward(const Judge& j, const std::string& call, const OpOutputs& got, const OpOutputs& fresh,
                      Findings& f, CheckResult& r) {
  compare_status(call, got.backward, fresh.backward, f);
  if (!got.backward.ok() || !fresh.backward.ok()) return;
  compare(j, call, "dx", got.dx, fresh.dx, f, r);
  compare(j, call, "dw", got.dw, fresh.dw, f, r);
  compare(j, call, "db", got.db, fresh.db, f, r);
}

bool same_outputs(const OpOutputs& a, const OpOutputs& b) {
  return a.forward.ok() == b.forward.ok() && a.backward.ok() == b.backward.ok() && bitwise_equal(a.y, b.y) &&
         bitwise_equal(a.dx, b.dx) && bitwise_equal(a.dw, b.dw) && bitwise_equal(a.db, b.db);
}

}  // namespace

CheckResult state_run(const CheckContext& ctx) {
  StatusOr<OpInputs> b = other_inputs(ctx);
  if (!b.ok()) return make_result(kName, Disposition::kSkipped, "no other data: " + b.status().message());
  const OpOutputs fresh_b = invoke(ctx.backend, ctx.c, ctx.geo, *b);
  // Two fresh calls on A that differ: a nondeterministic backend, judged within tolerance.
  const OpOutputs fresh_a = invoke(ctx.backend, ctx.c, ctx.geo, ctx.in);
  Judge ja{&ctx}, jb{&ctx};
  OpOutputs ref_b, abs_b;
  if (!same_outputs(fresh_a, ctx.cand)) {
    auto oracle = make_reference_backend();
    ref_b = invoke(*oracle, ctx.c, ctx.geo, *b);
    abs_b = absolute_pass_for(ctx.backend, ctx.c, ctx.geo, *b, ref_b);
    ja = Judge{&ctx, false, &ctx.ref, &ctx.abs};
    jb = Judge{&ctx, false, &ref_b, &abs_b};
  }
  const bool bwd = has_backward(ctx);
  OpOutputs a, other;  // A's and B's outputs; each backward gets its own forward's indices
  invoke_forward(ctx.backend, ctx.c, ctx.geo, ctx.in, a);
  invoke_forward(ctx.backend, ctx.c, ctx.geo, *b, other);
  if (bwd) {
    invoke_backward(ctx.backend, ctx.c, ctx.geo, ctx.in, a);
    invoke_backward(ctx.backend, ctx.c, ctx.geo, *b, other);
  }
  CheckResult r = make_result(kName, Disposition::kPassed);
  Findings back, fwd;
  compare_forward(ja, "forward(A)", a, ctx.cand, fwd, r);
  compare_forward(jb, "forward(B) after forward(A)", other, fresh_b, fwd, r);
  if (bwd) {
    compare_backward(ja, "backward(A) after forward(B)", a, ctx.cand, back, r);
    compare_backward(jb, "backward(B) after backward(A)", other, fresh_b, back, r);
  }
  OpOutputs again = std::move(other);  // its buffers, handed to the next call
  invoke_forward(ctx.backend, ctx.c, ctx.geo, ctx.in, again);
  compare_forward(ja, "forward(A) again, in forward(B)'s buffers", again, ctx.cand, fwd, r);
  const std::string how = ja.bitwise ? "bitwise" : "within twice the tolerance (two fresh calls differ)";
  if (!back.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = "backward read state left by another call: " + back.summary() + (fwd.empty() ? "" : "; ") +
                fwd.summary() + " (compared " + how + ")";
  } else if (!fwd.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = "forward read state left by another call: " + fwd.summary() + " (compared " + how + ")";
  } else {
    r.message = std::string(bwd ? "forward(A), forward(B), backward(A), backward(B), forward(A)"
                                : "forward(A), forward(B), forward(A)") +
                " each equal " + how + " a fresh call on its own inputs (B: the data of the next seed)";
  }
  return r;
}

}  // namespace kc::checks
