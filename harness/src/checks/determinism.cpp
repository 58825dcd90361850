// determinism: the backend runs kRepeats more times on the same inputs (forward and
// backward), and every output must be bitwise equal to the runner's run (run 1): tensor
// bits compared with memcmp, so NaN payloads and the sign of zero count. Required when
// the case says `deterministic: true` (a difference FAILS); otherwise a difference is
// reported, PASSED, with "nondeterministic" in the message (docs/checks.md, "Notes on individual checks"), so that a
// dashboard can track it without failing CI. Not run on the oracle (see common.h).
#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "check_list.h"
#include "common.h"
#include "findings.h"
#include "state_judge.h"

namespace kc::checks {

// The rule checks' shared helpers live in their own namespace: inline functions of
// another checks header may share a name (and must not share a definition).
using namespace rules;
namespace {

constexpr int kRepeats = 3;

void tensor_diff(const std::string& name, const Tensor& first, const Tensor& again, int run, Findings& f,
                 CheckResult& r) {
  const BitDiff d = bit_diff(first.data, again.data);
  if (d.count == 0 && first.shape == again.shape) return;
  std::string msg = name + " differs between run 1 and run " + std::to_string(run) + " at " + num(d.count) +
                    " elements, max |diff| " + num(d.max_abs);
  if (d.first >= 0 && d.first < first.size() && d.first < again.size()) {
    msg += " (first at " + at(d.first, first.shape) + ": " + num_exact(first[d.first]) + " vs " +
           num_exact(again[d.first]) + ")";
    if (r.worst.size() < 5)
      r.worst.push_back({name, unravel(d.first, first.shape), again[d.first], first[d.first], 0.0});
  }
  if (first.shape != again.shape)
    msg += " (shape " + dims_to_string(first.shape) + " vs " + dims_to_string(again.shape) + ")";
  r.max_abs_error = std::max(r.max_abs_error, d.max_abs);
  f.add(name, msg);
}

void index_diff(const IndexTensor& first, const IndexTensor& again, int run, Findings& f) {
  int64_t count = 0, at_first = -1;
  for (size_t i = 0; i < first.data.size() && i < again.data.size(); ++i) {
    if (first.data[i] == again.data[i]) continue;
    if (count++ == 0) at_first = static_cast<int64_t>(i);
  }
  if (count == 0 && first.data.size() == again.data.size()) return;
  std::string msg = "indices differ between run 1 and run " + std::to_string(run) + " at " + num(count) + " elements";
  if (at_first >= 0) {
    msg += " (first at " + at(at_first, first.shape) + ": " + num(first.data[static_cast<size_t>(at_first)]) + " vs " +
           num(again.data[static_cast<size_t>(at_first)]) + ")";
  }
  f.add("indices", msg);
}

void status_diff(const std::string& what, const Status& first, const Status& again, int run, Findings& f) {
  if (first.ok() == again.ok()) return;
  f.add(what, what + " returned " + first.to_string() + " in run 1 but " + again.to_string() + " in run " +
                  std::to_string(run));
}

// Every output of run `run` against run 1.
void compare_runs(const OpOutputs& first, const OpOutputs& again, int run, Findings& f, CheckResult& r) {
  status_diff("forward", first.forward, again.forward, run, f);
  if (!first.forward.ok() || !again.forward.ok()) return;
  tensor_diff("y", first.y, again.y, run, f, r);
  if (first.indices && again.indices) index_diff(*first.indices, *again.indices, run, f);
  status_diff("backward", first.backward, again.backward, run, f);
  if (!first.backward.ok() || !again.backward.ok()) return;
  tensor_diff("dx", first.dx, again.dx, run, f, r);
  if (!first.dw.data.empty() || !again.dw.data.empty()) tensor_diff("dw", first.dw, again.dw, run, f, r);
  if (!first.db.data.empty() || !again.db.data.empty()) tensor_diff("db", first.db, again.db, run, f, r);
}

// New values for every input (x, w, b, dy): the next seed's, and for inline data, which
// the seed does not change, the old values times -0.5. Not a sign flip: dw of (-x, -dy)
// is dw of (x, dy), so a flip leaves some outputs as they were.
StatusOr<OpInputs> new_values(const CheckContext& ctx) {
  Case c = ctx.c;
  c.data.seed += 1;
  KC_ASSIGN_OR_RETURN(OpInputs v, make_inputs(c));
  const std::array<std::pair<Tensor*, const Tensor*>, 4> pairs{
      {{&v.x, &ctx.in.x}, {&v.w, &ctx.in.w}, {&v.b, &ctx.in.b}, {&v.dy, &ctx.in.dy}}};
  for (const auto& [now, old] : pairs) {
    if (!bitwise_equal(*now, *old)) continue;
    for (double& e : now->data) e = round_to(now->dtype, -0.5 * e);
  }
  return v;
}

// Refilled buffers: the backend runs on a copy of the inputs, then on the same buffers
// refilled in place with new values (new_values), then on those values in fresh buffers.
// A backend that keys a cache on its inputs' addresses (an allocator hands the same
// address to new data) answers the refilled buffers from what it kept for the old
// values: outputs apart from the fresh buffers' beyond the allowance for summation order
// (order noise of a nondeterministic backend never is), and then maybe the old values' own.
void compare_refilled(const CheckContext& ctx, Findings& f) {
  StatusOr<OpInputs> values = new_values(ctx);
  if (!values.ok()) return;
  OpInputs reused = ctx.in;
  const OpOutputs primed = invoke(ctx.backend, ctx.c, ctx.geo, reused);
  if (!primed.forward.ok()) return;
  for (auto [to, from] : {std::pair{&reused.x, &values->x},
                          {&reused.w, &values->w},
                          {&reused.b, &values->b},
                          {&reused.dy, &values->dy}}) {
    std::copy(from->data.begin(), from->data.end(), to->data.begin());  // in place: the same addresses
  }
  const OpOutputs refilled = invoke(ctx.backend, ctx.c, ctx.geo, reused);
  const OpInputs fresh = reused;  // the same values in new buffers
  const OpOutputs clean = invoke(ctx.backend, ctx.c, ctx.geo, fresh);
  // Within the allowance for summation order (state_judge.h), the oracle made only when needed.
  const state::Judge allowance(ctx, false, ctx.c, ctx.geo, fresh);
  std::string apart;
  bool all_old = true;  // every element apart is bitwise the old values' output
  const auto judge = [&](const char* name, const Tensor& now, const Tensor& clean_t, const Tensor& old) {
    if (bitwise_equal(now, clean_t)) return;
    const std::vector<char> beyond = allowance.beyond_allowance(name, now, clean_t);
    if (std::find(beyond.begin(), beyond.end(), 1) == beyond.end()) return;
    apart += std::string(apart.empty() ? "" : ", ") + name;
    for (size_t i = 0; i < beyond.size(); ++i) {
      all_old = all_old && (!beyond[i] || (i < old.data.size() && same_bits(now.data[i], old.data[i])));
    }
  };
  if (refilled.forward.ok() && clean.forward.ok()) judge("y", refilled.y, clean.y, primed.y);
  if (refilled.backward.ok() && clean.backward.ok() && primed.backward.ok()) {
    judge("dx", refilled.dx, clean.dx, primed.dx);
    judge("dw", refilled.dw, clean.dw, primed.dw);
    judge("db", refilled.db, clean.db, primed.db);
  }
  if (apart.empty()) return;
  f.add("refilled",
        "outputs on input buffers refilled in place with new values (x, w, b and dy) differ from the "
        "same values' outputs in fresh buffers beyond twice the tolerance (" +
            apart + ")" + (all_old ? ", and are bitwise the old values' outputs" : "") +
            ": the backend keeps something by its buffers' addresses, such as a cache of earlier "
            "outputs or of converted weights");
}

std::string outputs_named(const OpOutputs& o) {
  std::string s = "y";
  if (o.indices) s += ", indices";
  if (o.backward.ok()) s += o.dw.data.empty() ? ", dx" : o.db.data.empty() ? ", dx, dw" : ", dx, dw, db";
  return s;
}

}  // namespace

CheckResult determinism_run(const CheckContext& ctx) {
  CheckResult r = make_result("determinism", Disposition::kPassed);
  Findings f;
  for (int run = 2; run <= kRepeats + 1; ++run) {
    compare_runs(ctx.cand, invoke(ctx.backend, ctx.c, ctx.geo, ctx.in), run, f, r);
  }
  Findings stale;
  compare_refilled(ctx, stale);
  if (!stale.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = stale.summary() + (f.empty() ? "" : "; also " + f.summary("more run(s)"));
    return r;
  }
  const std::string refill = "; input buffers refilled in place with new values gave no outputs of the old ones";
  if (f.empty()) {
    r.message = std::to_string(kRepeats + 1) + " runs bitwise equal (" + outputs_named(ctx.cand) + ")" + refill;
    return r;
  }
  if (ctx.c.deterministic) {
    r.disposition = Disposition::kFailed;
    r.message = "nondeterministic: " + f.summary("more run(s)") + " (the case requires deterministic: true)";
  } else {
    r.message = "nondeterministic (reported, not required: the case does not say deterministic: true): " +
                f.summary("more run(s)") + refill;
  }
  return r;
}

}  // namespace kc::checks
