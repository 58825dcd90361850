// gradcheck: the backend's analytic gradients against central finite differences of
// the oracle's forward in f64 (kc::ref: the backend's own low-precision forward is too
// noisy to difference), for the loss L(x, w, b) = <f(x, w, b), dy>.
// More on the method: docs/notes.md, section harness/src/checks/gradcheck.cpp.
#include "gradcheck.h"

#include <algorithm>
#include <array>
#include <optional>

#include "check_list.h"
#include "check_math.h"
#include "common.h"
#include "gradcheck_fd.h"
#include "judge/absolute_pass.h"
#include "relu_ambiguity.h"

namespace kc::checks {
namespace {

using namespace fd;

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// A probe unit's gradient (the sum over its elements, one unless they are tied maxima)
// and what the tolerance model allows it to be off by.
struct UnitGrad {
  double cand = 0.0, bound = 0.0;
};

UnitGrad unit_grad(const OpOutputs& cand, const OpOutputs& ref, const OpOutputs& abs, int t,
                   const std::vector<int64_t>& unit, const ToleranceSpec& spec) {
  UnitGrad g;
  double magnitude = 0.0;
  for (int64_t i : unit) {
    g.cand += grad_of(cand, t)[i];
    g.bound += element_bound(spec, std::abs(grad_of(ref, t)[i]), grad_of(abs, t)[i]);
    magnitude += std::abs(grad_of(cand, t)[i]);
  }
  // Our own f64 sum, which may cancel: its rounding is bounded by the sum of magnitudes.
  if (unit.size() > 1) g.bound += gamma_n(static_cast<int64_t>(unit.size()), u64()) * magnitude;
  return g;
}

// The name a comparison of one probe unit goes by: the tensor, or for a group of tied
// maxima (reported at its first element) how many were summed.
std::string unit_name(const std::string& tensor, const std::vector<int64_t>& unit) {
  return unit.size() < 2 ? tensor : tensor + " (" + std::to_string(unit.size()) + " tied maxima summed, first)";
}

// How the Jacobian's failing row entries are wrong, each judged beyond the entry's bound
// on its own, so that a count is evidence, not a guess: the backward has nothing where
// the forward depends on the input (a term left out), something where it does not (dy
// taken from another position), or neither of the two (another weight, a non-finite).
struct RowFaults {
  int64_t missing = 0, misplaced = 0, other = 0;
  void add(double cand, double value, double bound) {
    const double gap = std::abs(cand - value);
    if (gap <= bound) return;  // agrees
    const bool finite = std::isfinite(cand) && std::isfinite(value);
    if (finite && std::abs(cand) <= bound && std::abs(value) > bound) {
      ++missing;
    } else if (finite && std::abs(value) <= bound && std::abs(cand) > bound) {
      ++misplaced;
    } else {
      ++other;
    }
  }
};

// Entry (j, unit) of row j against the difference of y_j along a probe unit of tensor t:
// the tolerance model on the row's gradient plus the difference's own error for y_j.
void compare_row_entries(const Problem& p, int t, const std::vector<int64_t>& unit, const Probe& r,
                         const ToleranceSpec& spec, Tally& tally, RowFaults& faults) {
  const Tensor& y = p.ctx.ref.y;
  for (const Row& row : p.rows) {
    const auto j = static_cast<size_t>(row.output);  // the probe differences every output
    const double value = (4.0 * r.row_d_half[j] - r.row_d[j]) / 3.0;
    const double error = 6.0 * r.output_error[j] / r.h + std::abs(r.row_d[j] - r.row_d_half[j]);
    const UnitGrad g = unit_grad(row.cand, row.ref, row.abs, t, unit, spec);
    const auto where = [&] {
      std::vector<int64_t> at = unravel(row.output, y.shape);
      const std::vector<int64_t> in = unravel(unit.front(), grad_of(row.cand, t).shape);
      at.insert(at.end(), in.begin(), in.end());
      return std::pair{unit_name(std::string("J(y,") + kWrt[t] + ")", unit), std::move(at)};
    };
    tally.add_at(where, g.cand, value, g.bound + error);
    faults.add(g.cand, value, g.bound + error);
  }
}

// What the Jacobian's rows show when the gradients for the case's dy agree: only what the
// failing entries are evidence of.
std::string hidden_by_dy(const RowFaults& f) {
  const std::string head = "the gradients for the case's dy agree, the Jacobian's rows do not: ";
  if (f.misplaced > 0 && f.missing > 0) {  // moved values: entries of every kind
    return head + "the backward puts dy where y does not depend on the input and leaves it out where y does (" +
           std::to_string(f.misplaced) + " and " + std::to_string(f.missing) +
           " entries): dy read in the wrong layout or position, which this dy hides (a constant dy does)";
  }
  if (f.misplaced > 0) {
    return head + "the backward puts dy where y does not depend on the input (" + std::to_string(f.misplaced) +
           " entries): terms added that the forward does not have, which this dy hides";
  }
  if (f.missing > 0 && f.misplaced == 0 && f.other == 0) {
    return head + "the backward leaves out terms the forward has (" + std::to_string(f.missing) +
           " entries are 0 in the backward): a sum that drops some of its terms, where this dy is 0 or cancels";
  }
  return head + "the backward combines dy wrongly in a way this dy hides";
}

void full_jacobian(const Problem& p, Outcome& out) {
  const CheckContext& ctx = p.ctx;
  RowFaults faults;
  const Params theta = {ctx.in.x, ctx.in.w, ctx.in.b};
  for (int t = 0; t < 3; ++t) {
    if (theta[t].size() == 0) continue;
    const ToleranceSpec spec = tolerance_for(ctx, kGrad[t]);
    const double h = kStep * scale_of(theta[t]);
    Tally rows;  // the Jacobian's entries for this tensor
    const int64_t failed_before = out.tally.failures();
    const std::vector<std::vector<int64_t>> units = probe_units(p, t, theta[t].size());
    for (const std::vector<int64_t>& unit : units) {
      auto at = [&](double s) {
        Params q = theta;
        for (int64_t i : unit) q[t][i] += s;
        return q;
      };
      const Probe r = probe(p, at, h);
      ++out.probes;
      if (r.kink) {
        ++out.kinks;
        continue;
      }
      double slack = 0.0;
      for (int64_t i : unit) slack += p.slack[t].size() > 0 ? p.slack[t][i] : 0.0;
      const UnitGrad g = unit_grad(ctx.cand, ctx.ref, ctx.abs, t, unit, spec);
      out.tally.add(unit_name(kGrad[t], unit), unravel(unit.front(), theta[t].shape), g.cand, r.value,
                    g.bound + slack + difference_error(r));
      compare_row_entries(p, t, unit, r, spec, rows, faults);
    }
    if (const int64_t bad = out.tally.failures() - failed_before; bad > 0) {
      const bool grouped = units.size() < static_cast<size_t>(theta[t].size());
      out.notes.push_back(std::string(kGrad[t]) + ": " + std::to_string(bad) + " of " + std::to_string(units.size()) +
                          (grouped ? " elements and groups of tied maxima" : " elements") + " disagree");
    }
    if (rows.failures() > 0) {
      out.notes.push_back(std::string("J(y,") + kWrt[t] +
                          "), the backward of one output's unit dy at a time: " + std::to_string(rows.failures()) +
                          " of " + std::to_string(rows.count()) + " entries disagree (an entry J(y," + kWrt[t] +
                          ")[i,j] is indexed by y's index i, then " + kWrt[t] + "'s index j)");
      out.row_failures += rows.failures();
    }
    out.tally.merge(rows);
  }
  if (out.row_failures > 0 && out.row_failures == out.tally.failures()) out.notes.push_back(hidden_by_dy(faults));
}

// conv_bias_relu on a candidate: outputs whose relu' is ambiguous (relu_ambiguity.h).
// What their dy may move each gradient by is allowed (p.slack); their rows are left out.
struct Ambiguity {
  std::vector<bool> outputs;  // which they are; empty when none
  Swamping swamp;             // whether the slack leaves the gradients, or one of them, unjudged
};

Ambiguity allow_relu_ambiguity(Problem& p) {
  const ConvGeometry* g = conv_geo(p.ctx);
  if (p.ctx.is_reference || g == nullptr || !op_traits(p.ctx.c).relu) return {};
  ReluAmbiguity a = relu_ambiguity(p.ctx, *g);
  if (a.count == 0) return {};
  ref::ConvGrads s = ambiguity_slack(p.ctx, *g, a);
  Ambiguity out{{}, swamping(a, s, p.ctx.ref)};
  p.slack = {std::move(s.dx), std::move(s.dw), std::move(s.db)};
  p.ambiguous = a.count;
  out.outputs = std::move(a.ambiguous);
  return out;
}

// conv_bias_relu: every output whose z is exactly 0 (the relu's kink: any step that
// moves it is non-differentiable) or whose relu' is ambiguous is left out of the loss
// the probes difference (Problem::left_out). Returns how many sit at the kink and are
// not ambiguous: a right backward gives those exact zeros nothing (relu'(0) = 0), so a
// backward that passes their dy (relu'(0) = 1) now disagrees with the differences.
int64_t leave_out_kinks(Problem& p, const std::vector<bool>& ambiguous) {
  if (p.z0.size() == 0) return 0;
  p.left_out.assign(static_cast<size_t>(p.z0.size()), false);
  int64_t kinked = 0;
  for (int64_t i = 0; i < p.z0.size(); ++i) {
    const bool amb = !ambiguous.empty() && ambiguous[static_cast<size_t>(i)], kink = p.z0[i] == 0.0;
    p.left_out[static_cast<size_t>(i)] = amb || kink;
    kinked += kink && !amb;
  }
  return kinked;
}

// "; 3 groups of tied maxima (7 elements of x) moved as one …", or empty without ties.
std::string tie_note(const Problem& p) {
  if (p.tie_group.empty()) return {};
  std::vector<int64_t> size(p.tie_group.size(), 0);  // members per group, at its first element
  for (int64_t first : p.tie_group) ++size[static_cast<size_t>(first)];
  int64_t groups = 0, members = 0;
  for (int64_t n : size) {
    if (n < 2) continue;
    ++groups;
    members += n;
  }
  return "; " + std::to_string(groups) + (groups == 1 ? " group" : " groups") + " of tied maxima (" +
         std::to_string(members) +
         " elements of x) moved as one, their gradients compared as sums (which of them a window routes its "
         "dy to is the argmax check's to judge)";
}

// Why the backend's gradients in o cannot be compared element by element, or empty.
std::string shape_problem(const CheckContext& ctx, const OpOutputs& o) {
  const std::array<const Tensor*, 3> inputs = {&ctx.in.x, &ctx.in.w, &ctx.in.b};
  for (int t = 0; t < 3; ++t) {
    const Tensor& g = grad_of(o, t);
    if (inputs[t]->size() > 0 && g.shape != inputs[t]->shape) {
      return std::string(kGrad[t]) + " has shape " + dims_to_string(g.shape) + ", its input " +
             dims_to_string(inputs[t]->shape);
    }
  }
  return {};
}

// The Jacobian's rows: every output's unit cotangent through the oracle and the backend.
// A failed call or a wrong shape ends the check with that result.
// Outputs left out of the loss (`skip`: at the relu's kink, or ambiguous) have no row.
std::optional<CheckResult> add_rows(Problem& p, const std::vector<bool>& skip) {
  const CheckContext& ctx = p.ctx;
  OpInputs in = ctx.in;  // a small case: the copies are cheap
  for (int64_t j = 0; j < ctx.in.dy.size(); ++j) {
    if (!skip.empty() && skip[static_cast<size_t>(j)]) continue;
    in.dy = Tensor::zeros(ctx.in.dy.dtype, ctx.in.dy.shape);  // anew: a backend may have written into it
    in.dy[j] = 1.0;
    Row row;
    row.output = j;
    OracleRun oracle = oracle_run(ctx.memo, ctx.c, ctx.geo, in);
    row.ref = std::move(oracle.ref);
    row.abs = absolute_pass_for(ctx.backend, ctx.geo, std::move(oracle.abs));
    row.cand = ctx.is_reference ? row.ref : invoke(ctx.backend, ctx.c, ctx.geo, in);
    const std::string which = " for the unit dy of output " + dims_to_string(unravel(j, in.dy.shape));
    if (!row.cand.forward.ok()) return call_failed("gradcheck", "forward" + which, row.cand.forward);
    if (!row.cand.backward.ok()) return call_failed("gradcheck", "backward" + which, row.cand.backward);
    if (std::string bad = shape_problem(ctx, row.cand); !bad.empty()) {
      return make_result("gradcheck", Disposition::kFailed, bad + which);
    }
    p.rows.push_back(std::move(row));
  }
  return std::nullopt;
}

CheckResult conclude(const CheckContext& ctx, Outcome& out, const std::string& how) {
  const std::string kinks =
      out.kinks == 0 ? ""
                     : std::to_string(out.kinks) + " of " + std::to_string(out.probes) +
                           " probes non-differentiable (every usable step changes the relu mask or an argmax)";
  if (out.tally.count() == 0) {
    return make_result("gradcheck", Disposition::kMistrusted,
                       how + ": every probe is non-differentiable, nothing could be differenced; " + kinks);
  }
  CheckResult r = make_result("gradcheck", Disposition::kPassed);
  out.tally.into(r);
  if (r.disposition == Disposition::kFailed) {
    if (!kinks.empty()) out.notes.push_back(kinks);
    r.message = how + ": " + std::to_string(out.tally.failures()) + " of " + std::to_string(out.tally.count()) +
                " comparisons disagree with f64 finite differences of the oracle; " + joined(out.notes);
    return r;
  }
  r.message = how + ": gradients match f64 finite differences of the oracle (max error/bound " +
              num_brief(r.max_error_ratio) + ")" + (kinks.empty() ? "" : "; " + kinks);
  for (int t = 0; t < 3; ++t) {
    if (grad_of(ctx.ref, t).size() == 0) continue;
    // What the geometry makes zero is left out, as in backward.
    if (std::string why = distrust_output(ctx.geo, kGrad[t], grad_of(ctx.ref, t)); !why.empty()) {
      return make_result("gradcheck", Disposition::kMistrusted, why + " (" + r.message + ")");
    }
  }
  return r;
}

// Only the case's dy judged (no Jacobian rows): a pass where the ambiguity swamps one
// gradient is MISTRUSTED, as in backward (a wrong dw could hide in its slack); a
// failure stands. The rows judge every unambiguous output on its own, so a pass with
// them stands.
CheckResult unless_one_swamped(CheckResult r, const Problem& p, const Ambiguity& a) {
  const std::string one = a.swamp.one();
  if (r.disposition != Disposition::kPassed || !p.rows.empty() || one.empty()) return r;
  return make_result("gradcheck", Disposition::kMistrusted, one + " (" + r.message + ")");
}

// Max pool: the elements of x that receive gradient (the oracle's argmax targets) and
// the sums gradcheck judges them by (the tie groups holding them). Where every such sum
// holds two targets or more, no window's dy is judged on its own and a pass says little
// more than that each group's dy adds up: MISTRUSTED, as when every probe is
// non-differentiable. A failure stands.
CheckResult unless_ties_merge(CheckResult r, const Problem& p) {
  const PoolGeometry* g = pool_geo(p.ctx);
  if (r.disposition != Disposition::kPassed || g == nullptr || p.tie_group.empty() || !p.ctx.ref.indices) return r;
  const int64_t in = g->spatial.in_count(), out = g->spatial.out_count();
  std::vector<char> target(p.tie_group.size(), 0);
  std::vector<int64_t> held(p.tie_group.size(), 0);  // targets per group, at its first element
  int64_t targets = 0;
  const HostVector<int64_t>& idx = p.ctx.ref.indices->data;
  for (size_t w = 0; w < idx.size(); ++w) {
    if (idx[w] < 0 || idx[w] >= in) continue;
    const auto i = static_cast<size_t>(static_cast<int64_t>(w) / out * in + idx[w]);
    if (target[i]) continue;
    target[i] = 1;
    ++targets;
    ++held[static_cast<size_t>(p.tie_group[i])];
  }
  int64_t sums = 0, alone = 0;
  for (int64_t n : held) sums += n > 0, alone += n == 1;
  if (targets == 0 || alone > 0) return r;
  return make_result("gradcheck", Disposition::kMistrusted,
                     "tied maxima merge every element of x that receives gradient with another (" +
                         std::to_string(targets) + " of them into " + std::to_string(sums) +
                         " sums): no window's dy is judged on its own (the argmax check judges the routing) (" +
                         r.message + ")");
}

}  // namespace

std::string gradcheck_not_applicable(const CheckContext& ctx) { return nonfinite_values(ctx); }

CheckResult gradcheck_with(const CheckContext& ctx, const GradcheckOptions& options) {
  if (!ctx.cand.forward.ok()) return call_failed("gradcheck", "forward", ctx.cand.forward);
  if (!ctx.cand.backward.ok()) return call_failed("gradcheck", "backward", ctx.cand.backward);
  if (std::string bad = shape_problem(ctx, ctx.cand); !bad.empty()) {
    return make_result("gradcheck", Disposition::kFailed, bad + " (the shape check says more)");
  }
  Problem p = make_problem(ctx);
  const Ambiguity ambiguous = allow_relu_ambiguity(p);
  const std::string swamped = ambiguous.swamp.all();  // why the slack leaves the case's dy unjudged
  const int64_t kinked = leave_out_kinks(p, ambiguous.outputs);
  const std::string kink_notes =
      (p.ambiguous == 0 ? ""
                        : "; " + std::to_string(p.ambiguous) +
                              " pre-activations within rounding of 0 may take "
                              "either side of relu' (their dy allowed for, their Jacobian rows left out)") +
      (kinked == 0 ? ""
                   : "; " + std::to_string(kinked) +
                         " outputs at the relu's kink (z = 0) left out of the "
                         "differenced loss and the Jacobian's rows") +
      tie_note(p);
  Outcome out;
  const int64_t elements = ctx.in.x.size() + ctx.in.w.size() + ctx.in.b.size();
  if (elements <= options.full_limit) {
    const int64_t outputs = ctx.in.dy.size();
    std::string how = "every element of x, w, b (" + std::to_string(elements) + ")";
    // With rows, the unambiguous outputs' rows judge the relu mask whatever the slack on
    // the case's dy; without, a slack that swamps the gradients leaves nothing judged.
    if (outputs <= options.row_limit) {
      if (std::optional<CheckResult> stop = add_rows(p, p.left_out)) return *stop;
      if (p.rows.empty() && !swamped.empty()) {
        return make_result("gradcheck", Disposition::kMistrusted, swamped + "; every output is");
      }
      how += ", for the case's dy and as the full Jacobian (" + std::to_string(p.rows.size()) + " rows)";
    } else {
      if (!swamped.empty()) return make_result("gradcheck", Disposition::kMistrusted, swamped);
      how += " for the case's dy (" + std::to_string(outputs) + " outputs: too many for the full Jacobian)";
    }
    full_jacobian(p, out);
    return unless_ties_merge(unless_one_swamped(conclude(ctx, out, how + kink_notes), p, ambiguous), p);
  }
  if (!swamped.empty()) return make_result("gradcheck", Disposition::kMistrusted, swamped);
  const int count = std::max(4, options.directions);
  p.aimed = aimed_direction_applies(ctx) ? count : -1;
  directional(p, count + (p.aimed >= 0), out);
  return unless_ties_merge(
      unless_one_swamped(
          conclude(ctx, out,
                   std::to_string(count) + " random directions v^T J u" +
                       (p.aimed >= 0 ? " and 1 aimed at the backend's departure from the oracle's backward" : "") +
                       kink_notes),
          p, ambiguous),
      p);
}

CheckResult gradcheck_run(const CheckContext& ctx) { return gradcheck_with(ctx, GradcheckOptions{}); }

}  // namespace kc::checks
