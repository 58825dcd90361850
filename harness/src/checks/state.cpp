// state: results do not depend on earlier calls (DESIGN section 4). The backend runs
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

namespace kc::checks {

using namespace rules;
namespace {

constexpr const char* kName = "state";

// The outputs of one forward or backward call of the sequence.
struct Call {
  Tensor y, dx, dw, db;
  std::optional<IndexTensor> indices;
  Status status = ok_status();
};

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

// Poisons t for a call, in place where it already has the shape: the buffer of an
// earlier call handed to the next one.
void poison(Tensor& t, DType dtype, const Dims& shape) {
  Tensor p = poisoned(dtype, shape);
  if (t.shape == shape && t.size() == p.size()) {
    std::copy(p.data.begin(), p.data.end(), t.data.begin());
  } else {
    t = std::move(p);
  }
}

void forward(const CheckContext& ctx, const OpInputs& in, Call& out) {
  if (const ConvGeometry* g = conv_geo(ctx)) {
    poison(out.y, ctx.c.dtype, g->y_shape());
    out.status = ctx.backend.conv_forward(*g, in.x, in.w, g->bias ? &in.b : nullptr, is_fused(ctx.c), out.y);
    return;
  }
  const PoolGeometry& g = *pool_geo(ctx);
  poison(out.y, ctx.c.dtype, g.y_shape());
  if (g.mode == PoolMode::kTraining) {
    if (!out.indices) out.indices = IndexTensor{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(out.y.size()))};
    std::fill(out.indices->data.begin(), out.indices->data.end(), kPoisonIndex);
  }
  out.status = ctx.backend.maxpool_forward(g, in.x, out.y, out.indices ? &*out.indices : nullptr);
}

// The backward of the inputs `in`, whose forward gave `fwd` (its indices for a pool).
void backward(const CheckContext& ctx, const OpInputs& in, const Call& fwd, Call& out) {
  if (const ConvGeometry* g = conv_geo(ctx)) {
    out.dx = poisoned(ctx.c.dtype, g->x_shape());
    out.dw = poisoned(ctx.c.dtype, g->w_shape());
    if (g->bias) out.db = poisoned(ctx.c.dtype, g->b_shape());
    out.status = ctx.backend.conv_backward(*g, in.x, in.w, g->bias ? &in.b : nullptr, is_fused(ctx.c), in.dy, out.dx,
                                           out.dw, g->bias ? &out.db : nullptr);
    return;
  }
  const PoolGeometry& g = *pool_geo(ctx);
  out.dx = poisoned(ctx.c.dtype, g.x_shape());
  out.status = ctx.backend.maxpool_backward(g, in.dy, fwd.indices ? &*fwd.indices : nullptr, out.dx);
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

void compare_indices(const std::string& call, const Call& got, const OpOutputs& fresh, Findings& f) {
  if (!got.indices || !fresh.indices || got.indices->data == fresh.indices->data) return;
  f.add(call + "indices", call + ": indices differ from a fresh call's");
}

void compare_status(const std::string& call, const Status& got, const Status& fresh, Findings& f) {
  if (got.ok() || !fresh.ok()) return;
  f.add(call + "status", call + " returned " + got.to_string() + " where a fresh call succeeded");
}

void compare_forward(const Judge& j, const std::string& call, const Call& got, const OpOutputs& fresh, Findings& f,
                     CheckResult& r) {
  compare_status(call, got.status, fresh.forward, f);
  if (!got.status.ok() || !fresh.forward.ok()) return;
  compare(j, call, "y", got.y, fresh.y, f, r);
  if (j.bitwise) compare_indices(call, got, fresh, f);
}

void compare_backward(const Judge& j, const std::string& call, const Call& got, const OpOutputs& fresh, Findings& f,
                      CheckResult& r) {
  compare_status(call, got.status, fresh.backward, f);
  if (!got.status.ok() || !fresh.backward.ok()) return;
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
  Call fa, fb, ba, bb;
  forward(ctx, ctx.in, fa);
  forward(ctx, *b, fb);
  if (bwd) {
    backward(ctx, ctx.in, fa, ba);
    backward(ctx, *b, fb, bb);
  }
  CheckResult r = make_result(kName, Disposition::kPassed);
  Findings back, fwd;
  compare_forward(ja, "forward(A)", fa, ctx.cand, fwd, r);
  compare_forward(jb, "forward(B) after forward(A)", fb, fresh_b, fwd, r);
  if (bwd) {
    compare_backward(ja, "backward(A) after forward(B)", ba, ctx.cand, back, r);
    compare_backward(jb, "backward(B) after backward(A)", bb, fresh_b, back, r);
  }
  Call again = std::move(fb);  // its buffers, handed to the next call
  forward(ctx, ctx.in, again);
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
