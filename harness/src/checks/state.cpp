// state: results do not depend on earlier calls (docs/checks.md, "state"). The backend runs
//   forward(A), forward(B), backward(A), backward(B), forward(A)
// where A is the case's inputs and B other data of the same shapes, every output in a
// buffer poisoned before its call, and the last forward(A) written into the buffers
// forward(B) had (as an allocator hands freed memory to the next tensor). A backward
// gets its own forward's indices, never the latest ones. Then the same instance runs the
// case's shape variants and the case again (state_shapes.h). Each result must equal a
// fresh call on its own inputs, as state_judge.h compares them. A kernel that keeps the
// relu mask, the argmax indices or any workspace of the last forward and reads it in a
// backward (or the next forward) gives backward(A) B's routing: "backward read state left
// by another call".
#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "check_list.h"
#include "common.h"
#include "findings.h"
#include "state_judge.h"
#include "state_shapes.h"

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

// The same-shape sequence's outputs: A's and B's (each backward with its own forward's
// indices), B's fresh call, and A again in B's buffers.
struct Sequence {
  OpOutputs fresh_b, a, other, again;
  bool bwd = false;
};

Sequence run_sequence(const CheckContext& ctx, const OpInputs& b) {
  Sequence s;
  s.bwd = has_backward(ctx);
  s.fresh_b = invoke(ctx.backend, ctx.c, ctx.geo, b);
  invoke_forward(ctx.backend, ctx.c, ctx.geo, ctx.in, s.a);
  invoke_forward(ctx.backend, ctx.c, ctx.geo, b, s.other);
  if (s.bwd) {
    invoke_backward(ctx.backend, ctx.c, ctx.geo, ctx.in, s.a);
    invoke_backward(ctx.backend, ctx.c, ctx.geo, b, s.other);
  }
  OpOutputs other = s.other;  // compared below; its buffers go to the next call
  s.again = std::move(s.other);
  s.other = std::move(other);
  invoke_forward(ctx.backend, ctx.c, ctx.geo, ctx.in, s.again);
  return s;
}

// The sequence's results against their fresh calls: backward and forward findings.
std::pair<Findings, Findings> judge_sequence(const CheckContext& ctx, const OpInputs& b, const Sequence& s,
                                             bool bitwise, CheckResult& r) {
  const state::Judge ja(ctx, bitwise, ctx.c, ctx.geo, ctx.in, &ctx.ref, &ctx.abs), jb(ctx, bitwise, ctx.c, ctx.geo, b);
  Findings back, fwd;
  state::compare_forward(ja, "forward(A)", s.a, ctx.cand, fwd, r);
  state::compare_forward(jb, "forward(B) after forward(A)", s.other, s.fresh_b, fwd, r);
  if (s.bwd) {
    state::compare_backward(ja, "backward(A) after forward(B)", s.a, ctx.cand, back, r);
    state::compare_backward(jb, "backward(B) after backward(A)", s.other, s.fresh_b, back, r);
  }
  state::compare_forward(ja, "forward(A) again, in forward(B)'s buffers", s.again, ctx.cand, fwd, r);
  return {std::move(back), std::move(fwd)};
}

}  // namespace

CheckResult state_run(const CheckContext& ctx) {
  StatusOr<OpInputs> b = other_inputs(ctx);
  if (!b.ok()) return make_result(kName, Disposition::kSkipped, "no other data: " + b.status().message());
  const Sequence s = run_sequence(ctx, *b);
  CheckResult r = make_result(kName, Disposition::kPassed);
  bool bitwise = ctx.c.deterministic;
  auto [back, fwd] = judge_sequence(ctx, *b, s, bitwise, r);
  std::string noted;
  if ((!back.empty() || !fwd.empty()) && bitwise && state::shows_nondeterminism(ctx)) {
    bitwise = false;  // its nondeterminism is the determinism check's finding
    noted = " (fresh calls differ from each other, so compared within twice the tolerance)";
    std::tie(back, fwd) = judge_sequence(ctx, *b, s, bitwise, r);
  }
  const char* how = state::how_compared(bitwise);
  if (!back.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = "backward read state left by another call: " + back.summary() + (fwd.empty() ? "" : "; ") +
                fwd.summary() + " (compared " + how + ")" + noted;
    return r;
  }
  if (!fwd.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = "forward read state left by another call: " + fwd.summary() + " (compared " + how + ")" + noted;
    return r;
  }
  r.message = std::string(s.bwd ? "forward(A), forward(B), backward(A), backward(B), forward(A)"
                                : "forward(A), forward(B), forward(A)") +
              " each equal " + how + " a fresh call on its own inputs (B: the data of the next seed)" + noted;
  check_across_shapes(ctx, bitwise, r);
  return r;
}

}  // namespace kc::checks
