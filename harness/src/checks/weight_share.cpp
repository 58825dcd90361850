// weight_share: dw is a sum over the batch and every output position (docs/ops.md,
// "Convolution"), so it must split the way a sum does. On the backend: dw of the batch
// equals the sum of each sample's dw (batch split) and of the dw of two tiles of output
// positions (tile split); a second backward gives bitwise the same dw; and, on a
// candidate, dw equals the oracle's sum. db the same way. A failure is classified against
// the oracle: mean instead of sum, single position (last write wins), partial sum,
// nondeterministic race.
// More on the method: docs/notes.md, section harness/src/checks/weight_share.cpp.
#include <algorithm>
#include <bit>
#include <functional>
#include <tuple>

#include "check_list.h"
#include "check_math.h"
#include "common.h"
#include "kc/ref/activation.h"
#include "kc/ref/conv.h"
#include "relu_ambiguity.h"
#include "weight_share_parts.h"

namespace kc::checks {
namespace {

constexpr const char* kName = "weight_share";

struct Grads {
  Tensor dw, db;
};

// A run of the backend on other inputs: its gradients, and the y and dx they came with.
struct Run {
  Grads grads;
  Tensor y, dx;
};

// Allowed |lhs - rhs| per element of an identity whose rhs sums `parts` backend runs:
// the lhs (one run) and the rhs may each carry the bound model's error, and our f64 sum
// of the parts its rounding; against the oracle (parts = 0) only the lhs errs.
struct Rule {
  ToleranceSpec spec;
  bool exact = false;
  double bound(double ref, double abs, int64_t parts) const {
    return element_bound(spec, std::abs(ref), abs) + (parts > 0 ? element_bound(spec, abs, abs) : 0.0) +
           gamma_n(parts + 1, u64()) * abs;
  }
};

Rule rule_for(const CheckContext& ctx, const char* tensor) {
  Rule r{tolerance_for(ctx, tensor)};
  // A transform rounds integer data too (tolerance_for judged it by its bound instead).
  r.exact = ctx.c.data.fill == Fill::kInteger && r.spec.tolerance.kind != ToleranceKind::kExplicit &&
            (ctx.is_reference || !ctx.backend.numerics().transform());
  if (r.spec.tolerance.kind == ToleranceKind::kExact) r.spec.tolerance.kind = ToleranceKind::kBound;
  return r;
}

// What the identities found.
struct IdentityOutcome {
  const FusedExpectation* fused = nullptr;  // conv_bias_relu with ambiguous outputs
  Tally tally;
  std::vector<std::string> held, broken;
  std::string batch_one;  // a batch-1 run whose y or dx is not its sample's: which
  bool dw_broken = false, db_broken = false, race_fails = false;
  std::string race;  // how two runs differed, empty when bitwise equal
};

// The backend's backward on a copy of the case with other inputs.
StatusOr<Run> run_backend(const CheckContext& ctx, Case c, const OpInputs& in) {
  c = with_own_inputs(std::move(c));  // inline data belongs to the original shapes; `in` replaces it
  KC_ASSIGN_OR_RETURN(OpGeometry geo, op_geometry(c));
  OpOutputs o = invoke(ctx.backend, c, geo, in);
  if (!o.forward.ok()) return o.forward;
  if (!o.backward.ok()) return o.backward;
  return Run{{std::move(o.dw), std::move(o.db)}, std::move(o.y), std::move(o.dx)};
}

Tensor sample(const Tensor& t, int64_t n) {
  Tensor s;
  s.dtype = t.dtype;
  s.shape = t.shape;
  s.shape[0] = 1;
  const int64_t per = t.size() / t.shape[0];
  s.data.assign(t.data.begin() + n * per, t.data.begin() + (n + 1) * per);
  return s;
}

void accumulate(Grads& sum, const Grads& part) {
  for (int64_t i = 0; i < sum.dw.size() && i < part.dw.size(); ++i) sum.dw[i] += part.dw[i];
  for (int64_t i = 0; i < sum.db.size() && i < part.db.size(); ++i) sum.db[i] += part.db[i];
}

int64_t compare(const char* tensor, const Tensor& lhs, const Tensor& rhs, const Tensor& ref, const Tensor& abs,
                const Tensor* slack, const Rule& rule, int64_t parts, Tally& tally) {
  const int64_t before = tally.failures();
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double r = i < rhs.size() ? rhs[i] : NAN;
    // Slack moves the value a kernel rounds to its output dtype, as in compare_tensors;
    // against the oracle the bound is taken at its sum (ambiguous outputs left out).
    const double s =
        slack != nullptr && i < slack->size() ? (*slack)[i] * (1.0 + unit_roundoff(rule.spec.storage)) : 0.0;
    tally.add(tensor, unravel(i, ref.shape), lhs[i], r, rule.bound(parts == 0 ? r : ref[i], abs[i], parts) + s,
              rule.exact);
  }
  return tally.failures() - before;
}

// The backend's dw (db) against `want`, a sum of `parts` runs, as the identity `what`.
void check_identity(const CheckContext& ctx, const std::string& what, const Grads& want, int64_t parts,
                    IdentityOutcome& f) {
  const bool bias = conv_geo(ctx)->bias;
  const Tensor* dw_slack = f.fused ? &f.fused->slack.dw : nullptr;
  const Tensor* db_slack = f.fused ? &f.fused->slack.db : nullptr;
  const int64_t dw_bad =
      compare("dw", ctx.cand.dw, want.dw, ctx.ref.dw, ctx.abs.dw, dw_slack, rule_for(ctx, "dw"), parts, f.tally);
  const int64_t db_bad =
      bias ? compare("db", ctx.cand.db, want.db, ctx.ref.db, ctx.abs.db, db_slack, rule_for(ctx, "db"), parts, f.tally)
           : 0;
  if (dw_bad + db_bad == 0) {
    f.held.push_back(what);
    return;
  }
  f.dw_broken = f.dw_broken || dw_bad > 0;
  f.db_broken = f.db_broken || db_bad > 0;
  std::string which = dw_bad ? "dw in " + std::to_string(dw_bad) + " of " + std::to_string(ctx.ref.dw.size()) : "";
  if (db_bad) {
    which += (dw_bad ? ", db in " : "db in ") + std::to_string(db_bad) + " of " + std::to_string(ctx.ref.db.size());
  }
  f.broken.push_back(what + " breaks: " + which + " elements");
}

// A batch-1 run's y and dx against the oracle's sample n, as forward and backward judge
// them (a plan or workspace kept for another batch shows here, not in the dw sum); empty
// when both agree. Not on conv_bias_relu, whose ambiguous relu' only dw and db allow for.
std::string sample_outputs_differ(const CheckContext& ctx, const Run& part, int64_t n, Tally& tally) {
  if (op_traits(ctx.c).relu || ctx.is_reference) return {};
  std::string differ;
  for (const auto& [name, got, ref, abs] :
       {std::tuple{"y", &part.y, &ctx.ref.y, &ctx.abs.y}, std::tuple{"dx", &part.dx, &ctx.ref.dx, &ctx.abs.dx}}) {
    const Tensor want = sample(*ref, n);
    if (got->shape != want.shape) return "a batch-1 run's " + std::string(name) + " has another shape";
    const int64_t bad = compare(name, *got, want, want, sample(*abs, n), nullptr, rule_for(ctx, name), 0, tally);
    if (bad > 0) {
      differ += (differ.empty() ? "" : ", ") + std::string(name) + " in " + std::to_string(bad) + " of " +
                std::to_string(want.size()) + " elements";
    }
  }
  if (differ.empty()) return {};
  return "the batch-1 run of sample " + std::to_string(n) + " gives another " + differ + " than the oracle's sample " +
         std::to_string(n) + ": results depend on the batch size";
}

Status batch_split(const CheckContext& ctx, const ConvGeometry& g, IdentityOutcome& f) {
  if (g.batch < 2) return ok_status();
  Grads sum{Tensor::zeros(DType::kF64, g.w_shape()), g.bias ? Tensor::zeros(DType::kF64, g.b_shape()) : Tensor{}};
  for (int64_t n = 0; n < g.batch; ++n) {
    Case c = ctx.c;
    c.input.batch = 1;
    const OpInputs one{sample(ctx.in.x, n), ctx.in.w, ctx.in.b, sample(ctx.in.dy, n)};
    KC_ASSIGN_OR_RETURN(Run part, run_backend(ctx, c, one));
    if (f.batch_one.empty()) f.batch_one = sample_outputs_differ(ctx, part, n, f.tally);
    accumulate(sum, part.grads);
  }
  check_identity(ctx, "batch split (sum of " + std::to_string(g.batch) + " batch-1 runs)", sum, g.batch, f);
  return ok_status();
}

Status tile_split_identity(const CheckContext& ctx, const ConvGeometry& g, IdentityOutcome& f) {
  const std::optional<TileSplit> s = tile_split(g);
  if (!s) return ok_status();
  Grads sum{Tensor::zeros(DType::kF64, g.w_shape()), g.bias ? Tensor::zeros(DType::kF64, g.b_shape()) : Tensor{}};
  for (bool first : {true, false}) {
    const Tensor dy = masked(ctx.in.dy, [&](int64_t i) { return s->first(i) == first; });
    KC_ASSIGN_OR_RETURN(Run part, run_backend(ctx, ctx.c, {ctx.in.x, ctx.in.w, ctx.in.b, dy}));
    accumulate(sum, part.grads);
  }
  check_identity(ctx,
                 "tile split (spatial dim " + std::to_string(s->dim) + " at " + std::to_string(s->cut) + " of " +
                     std::to_string(s->extent) + " outputs)",
                 sum, 2, f);
  return ok_status();
}

Status two_runs(const CheckContext& ctx, IdentityOutcome& f) {
  const OpOutputs again = invoke(ctx.backend, ctx.c, ctx.geo, ctx.in);
  if (!again.forward.ok()) return again.forward;
  if (!again.backward.ok()) return again.backward;
  int64_t differ = 0;
  bool beyond = false;
  const Rule rule = rule_for(ctx, "dw");
  for (int64_t i = 0; i < ctx.cand.dw.size() && i < again.dw.size(); ++i) {
    if (std::bit_cast<uint64_t>(ctx.cand.dw[i]) == std::bit_cast<uint64_t>(again.dw[i])) continue;
    ++differ;
    beyond = beyond || !(std::abs(ctx.cand.dw[i] - again.dw[i]) <= rule.bound(ctx.ref.dw[i], ctx.abs.dw[i], 1));
  }
  const bool db_differs = !bitwise_equal(ctx.cand.db, again.db);
  if (differ == 0 && !db_differs) {
    f.held.push_back("two runs bitwise equal");
    return ok_status();
  }
  f.race = "a second run gives a different " +
           std::string(differ ? "dw (" + std::to_string(differ) + " elements)" : "db") +
           (beyond ? ", beyond the tolerance: updates are lost or duplicated" : ", within the tolerance");
  f.race_fails = beyond || rule.exact || ctx.c.deterministic;
  if (f.race_fails) f.broken.push_back("two runs differ bitwise");
  return ok_status();
}

// A known way to get the sum wrong, as the tensor it would produce.
struct Hypothesis {
  const char* cls;
  std::string detail;
  Tensor t;
};

// dy routed through relu' for conv_bias_relu: the cotangent that dw and db sum.
Tensor routed_dy(const CheckContext& ctx, const ConvGeometry& g) {
  if (!op_traits(ctx.c).relu) return ctx.in.dy;
  return ref::relu_backward(ref::conv_forward(g, ctx.in.x, ctx.in.w, &ctx.in.b), ctx.in.dy);
}

std::vector<Hypothesis> hypotheses(const CheckContext& ctx, const ConvGeometry& g, bool db) {
  const int64_t N = g.batch, P = g.spatial.out_count();
  std::vector<Hypothesis> h;
  for (const auto& [count, label] : {std::pair{N * P, "N*P"}, std::pair{N, "N"}, std::pair{P, "P"}}) {
    if (count < 2) continue;
    Tensor t = db ? ctx.ref.db : ctx.ref.dw;
    for (double& v : t.data) v /= static_cast<double>(count);
    h.push_back({"mean instead of sum", "= the oracle's / " + std::to_string(count) + " = " + label, std::move(t)});
  }
  const Tensor dz = routed_dy(ctx, g);
  for (const Part& p : partial_parts(g)) {
    const Tensor m = masked(dz, p.keep);
    h.push_back({p.cls, p.detail, db ? ref::conv_backward_bias(g, m) : ref::conv_backward_weight(g, ctx.in.x, m)});
  }
  return h;
}

// The largest |got - hyp| over twice the bound at hyp: at most 1 where got matches hyp.
double mismatch(const Tensor& got, const Tensor& hyp, const Tensor& abs, const ToleranceSpec& spec) {
  if (got.size() != hyp.size()) return INFINITY;
  double worst = 0.0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(got[i] - hyp[i]), bound = 2.0 * element_bound(spec, std::abs(hyp[i]), abs[i]);
    const double ratio = d == 0.0 ? 0.0 : bound > 0.0 ? d / bound : INFINITY;
    if (!(ratio <= 1.0)) return INFINITY;  // NaN too
    worst = std::max(worst, ratio);
  }
  return worst;
}

// Which known mistake the backend's dw (db when only db broke) is, from the oracle: the
// one hypothesis it matches. A case with fewer than kClassifyPositions output positions
// over the batch, or whose data leaves the backend's result within reach of two
// different mistakes, is "too small to classify": there, a rounding error looks like one
// position's share as much as a lost one.
constexpr int64_t kClassifyPositions = 4;

std::string classify(const CheckContext& ctx, const ConvGeometry& g, bool db) {
  const char* which = db ? "db" : "dw";
  if (ctx.is_reference) return std::string("unclassified (the backend is the oracle: nothing to classify against)");
  const int64_t positions = g.batch * g.spatial.out_count();
  if (positions < kClassifyPositions) {
    return std::string("too small to classify (") + which + " sums " + std::to_string(positions) +
           " output positions over the batch; the classes need " + std::to_string(kClassifyPositions) + ")";
  }
  const Tensor &got = db ? ctx.cand.db : ctx.cand.dw, &ref = db ? ctx.ref.db : ctx.ref.dw;
  const Tensor& abs = db ? ctx.abs.db : ctx.abs.dw;
  ToleranceSpec spec = tolerance_for(ctx, which);
  spec.tolerance.kind = ToleranceKind::kBound;
  std::vector<std::string> matched;
  std::vector<const Tensor*> seen;
  const std::vector<Hypothesis> hyps = hypotheses(ctx, g, db);
  for (const Hypothesis& h : hyps) {
    const bool zero = std::all_of(h.t.data.begin(), h.t.data.end(), [](double v) { return v == 0.0; });
    if (zero || mismatch(ref, h.t, abs, spec) <= 1.0) continue;  // cannot be told apart from the right sum
    // The same tensor under another name (N = 1: the mean over N*P is the mean over P).
    if (std::any_of(seen.begin(), seen.end(), [&](const Tensor* t) { return bitwise_equal(*t, h.t); })) continue;
    seen.push_back(&h.t);
    const double m = mismatch(got, h.t, abs, spec);
    if (m <= 1.0) matched.push_back(std::string(h.cls) + " (" + which + " " + h.detail + ")");
  }
  if (matched.size() > 1) {
    return "too small to classify (" + std::string(which) + " matches " + matched[0] + " and " + matched[1] +
           " alike on this data)";
  }
  if (matched.size() == 1) return matched[0];
  return std::string("unclassified (") + which +
         " matches none of: the oracle's mean, one position, one sample, one tile)";
}

// A known partial sum that the identities cannot tell from the right one on this data,
// though it differs: every element of its dw (or db) lies within the oracle's-sum
// identity's bound of `want` (the oracle's sum, relu-ambiguous outputs left out), so a
// kernel that makes that mistake passes. Named with what it leaves out as a fraction of
// the bound; empty when there is none. Integer fills compare bitwise (the exact rule,
// exact_part_sum, covers them).
std::string partial_sum_within_bound(const CheckContext& ctx, const std::vector<PartSum>& sums, const Grads& want,
                                     const IdentityOutcome& f) {
  for (const PartSum& s : sums) {
    for (const bool bias : {false, true}) {
      const char* which = bias ? "db" : "dw";
      const Tensor& ref = bias ? ctx.ref.db : ctx.ref.dw;
      const Tensor& goal = bias ? want.db : want.dw;
      const Tensor& abs = bias ? ctx.abs.db : ctx.abs.dw;
      if (ref.size() == 0 || !s.left.judged(bias)) continue;
      const Rule rule = rule_for(ctx, which);
      if (rule.exact) continue;
      const Tensor* slack = f.fused ? (bias ? &f.fused->slack.db : &f.fused->slack.dw) : nullptr;
      const Tensor& t = bias ? s.db : s.dw;
      double worst = 0.0;  // the largest |t - want| / bound
      for (int64_t i = 0; i < ref.size() && worst <= 1.0; ++i) {
        const double bound =
            rule.bound(ref[i], abs[i], 0) + (slack != nullptr && i < slack->size() ? (*slack)[i] : 0.0);
        const double d = std::abs(t[i] - goal[i]);
        const double ratio = d == 0.0 ? 0.0 : bound > 0.0 ? d / bound : INFINITY;
        worst = ratio <= 1.0 ? std::max(worst, ratio) : INFINITY;  // NaN too
      }
      if (!(worst <= 1.0)) continue;
      return "the data cannot tell the right sum from this mistake: " + std::string(which) + " " + s.part.detail +
             " (" + s.part.cls + ") is within the tolerance of the right " + which +
             " here: what it leaves out is at most " + num_brief(worst) + " of the bound";
    }
  }
  return {};
}

}  // namespace

std::string weight_share_not_applicable(const CheckContext& ctx) {
  if (std::string why = nonfinite_inputs(ctx); !why.empty()) return why;
  return overflowing(ctx, {{"dw", &ctx.ref.dw}, {"db", &ctx.ref.db}});  // its sums: dw and db only
}

CheckResult weight_share_run(const CheckContext& ctx) {
  const ConvGeometry& g = *conv_geo(ctx);
  if (ctx.cand.dw.shape != g.w_shape() || (g.bias && ctx.cand.db.shape != g.b_shape())) {
    return make_result(kName, Disposition::kFailed,
                       "dw or db does not have the contract's shape (the shape check says more)");
  }
  InputWriteWatch watch;  // input_writes(): what this check's own runs saw written
  IdentityOutcome f;
  FusedExpectation fused;
  if (op_traits(ctx.c).relu && !ctx.is_reference) fused = fused_expectation(ctx, g);
  if (std::string all = fused.swamp.all(false); !all.empty()) return make_result(kName, Disposition::kMistrusted, all);
  if (fused.ambiguous > 0) f.fused = &fused;
  if (Status s = batch_split(ctx, g, f); !s.ok()) return call_failed(kName, "a batch-1 run", s);
  if (Status s = tile_split_identity(ctx, g, f); !s.ok()) return call_failed(kName, "a run on one output tile", s);
  if (Status s = two_runs(ctx, f); !s.ok()) return call_failed(kName, "a second run", s);
  if (!f.batch_one.empty()) {  // an input written comes first, as for the identities below
    const std::string wrote = input_writes(ctx);
    CheckResult r = make_result(kName, Disposition::kFailed, wrote.empty() ? f.batch_one : wrote + "; " + f.batch_one);
    f.tally.into(r);
    return r;
  }
  if (!ctx.is_reference) {
    const Grads oracle = f.fused ? Grads{fused.want.dw, fused.want.db} : Grads{ctx.ref.dw, ctx.ref.db};
    check_identity(ctx, "the oracle's sum", oracle, 0, f);
  }
  CheckResult r = make_result(kName, Disposition::kPassed);
  f.tally.into(r);
  const std::string ratio = " (max error/bound " + num_brief(r.max_error_ratio) + ")";
  if (!f.broken.empty()) {
    r.disposition = Disposition::kFailed;
    // Runs on changed inputs differ for that reason alone: neither a race nor a known
    // partial sum can be told from it.
    const std::string wrote = input_writes(ctx);
    const std::string cls = !wrote.empty() ? wrote
                            : f.race_fails ? "nondeterministic race (" + f.race + ")"
                                           : classify(ctx, g, !f.dw_broken && f.db_broken);
    r.message = cls;  // the report adds the check's name and the max error/bound
    for (const std::string& b : f.broken) r.message += "; " + b;
    return r;
  }
  r.message = "dw" + std::string(g.bias ? " and db" : "") + " split as a sum:";
  if (f.fused)
    r.message +=
        " " + std::to_string(fused.ambiguous) + " pre-activations within rounding of 0 may take either side of relu';";
  for (const std::string& h : f.held) r.message += " " + h + ";";
  if (!f.race.empty()) r.message += " " + f.race + " (allowed: the case does not ask for determinism);";
  r.message += ratio;
  // One swamped gradient: dw and db are judged beyond its slack, but a wrong one could hide in it.
  if (std::string one = fused.swamp.one(false); !one.empty()) return make_result(kName, Disposition::kMistrusted, one);
  for (const auto& [name, t] : {std::pair{"dw", &ctx.ref.dw}, std::pair{"db", &ctx.ref.db}}) {
    if (t->size() == 0) continue;
    if (std::string why = distrust(name, *t); !why.empty()) return make_result(kName, Disposition::kMistrusted, why);
  }
  const std::vector<PartSum> sums = part_sums(g, ctx.in.x, routed_dy(ctx, g));  // for both rules
  std::string why = exact_part_sum(sums, ctx.ref.dw, ctx.ref.db);
  if (why.empty())
    why = partial_sum_within_bound(ctx, sums,
                                   f.fused ? Grads{fused.want.dw, fused.want.db} : Grads{ctx.ref.dw, ctx.ref.db}, f);
  if (!why.empty()) return make_result(kName, Disposition::kMistrusted, why + " (" + r.message + ")");
  return r;
}

}  // namespace kc::checks
