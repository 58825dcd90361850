// determinism: the backend runs kRepeats more times on the same inputs (forward and
// backward), and every output must be bitwise equal to the runner's run (run 1): tensor
// bits compared with memcmp, so NaN payloads and the sign of zero count. Required when
// the case says `deterministic: true` (a difference FAILS); otherwise a difference is
// reported, PASSED, with "nondeterministic" in the message (docs/checks.md, "Notes on individual checks"), so that a
// dashboard can track it without failing CI. Not run on the oracle (see common.h).
#include "check_list.h"
#include "common.h"
#include "findings.h"

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

// Refilled buffers: the backend runs on a copy of the inputs, then on the same buffers
// refilled in place with other values (x and dy negated), then on those values in fresh
// buffers. A backend that keys a cache on its inputs' addresses (an allocator hands the
// same address to new data) returns, for the refilled buffers, what it computed for the
// old values: an output that differs from the fresh run's and is bitwise the old run's.
// Only that is judged, so rounding noise of a nondeterministic backend is never taken
// for it; and only where the backend was otherwise deterministic.
void compare_refilled(const CheckContext& ctx, Findings& f) {
  OpInputs reused = ctx.in;
  const OpOutputs primed = invoke(ctx.backend, ctx.c, ctx.geo, reused);
  if (!primed.forward.ok()) return;
  for (Tensor* t : {&reused.x, &reused.dy}) {
    for (double& v : t->data) v = -v;  // exact in every dtype; in place: the same addresses
  }
  const OpOutputs refilled = invoke(ctx.backend, ctx.c, ctx.geo, reused);
  const OpInputs fresh = reused;  // the same values in new buffers
  const OpOutputs clean = invoke(ctx.backend, ctx.c, ctx.geo, fresh);
  Findings d;
  CheckResult unused;
  compare_runs(clean, refilled, 2, d, unused);
  if (d.empty()) return;
  // The old values' outputs, returned again for the new ones.
  auto stale = [](const Tensor& now, const Tensor& fresh, const Tensor& old) {
    return now.size() > 0 && !bitwise_equal(now, fresh) && bitwise_equal(now, old);
  };
  const bool forward_stale = refilled.forward.ok() && clean.forward.ok() && stale(refilled.y, clean.y, primed.y);
  const bool backward_stale = refilled.backward.ok() && clean.backward.ok() && primed.backward.ok() &&
                              (stale(refilled.dx, clean.dx, primed.dx) || stale(refilled.dw, clean.dw, primed.dw) ||
                               stale(refilled.db, clean.db, primed.db));
  if (!forward_stale && !backward_stale) return;
  f.add("refilled",
        "outputs on input buffers refilled in place with new values differ from the outputs on the same "
        "values in fresh buffers (" +
            d.summary("more") +
            "; run 1 is here the fresh buffers, run 2 the "
            "refilled ones), and equal bitwise to the outputs for the old values: the backend returns "
            "something kept by its buffers' addresses, such as a cache of earlier outputs");
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
  if (f.empty()) {
    Findings stale;
    compare_refilled(ctx, stale);
    if (!stale.empty()) {
      r.disposition = Disposition::kFailed;
      r.message = stale.summary();
      return r;
    }
    r.message = std::to_string(kRepeats + 1) + " runs bitwise equal (" + outputs_named(ctx.cand) +
                "); input buffers refilled in place with new values gave no outputs of the old ones";
    return r;
  }
  if (ctx.c.deterministic) {
    r.disposition = Disposition::kFailed;
    r.message = "nondeterministic: " + f.summary("more run(s)") + " (the case requires deterministic: true)";
  } else {
    r.message = "nondeterministic (reported, not required: the case does not say deterministic: true): " +
                f.summary("more run(s)");
  }
  return r;
}

}  // namespace kc::checks
