// adjoint: the backward passes of a linear conv are the transposes of its forward, on
// the backend alone:
//   <conv(x, w), g> = <x, dx(g, w)> = <w, dw(x, g)>
// with conv without bias (a biased case runs again with the bias off) and g the case's
// dy. Bitwise equal with `fill: integer` and `tolerance: exact`; otherwise two sides agree
// when their gap is within the sum of their rounding bounds. relu and max pool are not
// linear: not applicable.
// More on the method: docs/notes.md, section harness/src/checks/adjoint.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "check_list.h"
#include "check_math.h"
#include "common.h"
#include "kc/ref/conv.h"

namespace kc::checks {
namespace {

constexpr const char* kName = "adjoint";

// One side of the identity: <out, by> where out is a backend output.
struct Side {
  const char* name;
  double value = 0.0, bound = 0.0;
};

// How many spreads of the rounding noise a side may be off: a normal tail of about
// 2e-9 per side, on spreads that already exceed a correct kernel's.
constexpr double kNoiseDeviations = 6.0;

// The error of <out, by> is sum_i e_i by_i with e independent of by: y's error comes
// from x and w, not g; dx's from g and w, not x; dw's from x and g, not w. Its worst
// case, sum_i |by_i| bound_i, grows like the number of outputs while the value grows
// like its square root, so past toy sizes it swamps the identity and the check could
// no longer fail. Under the probabilistic model (element_noise: mean-zero errors of
// spread s_i), with by = mean + r: the mean's share is at most |mean| sum_i s_i, and
// sum_i e_i r_i has a spread of at most sqrt(sum_i (s_i r_i)^2). The side's bound is the
// smaller of the worst case and kNoiseDeviations spreads, plus the rounding of the f64
// inner product itself.
Side inner(const char* name, const Tensor& out, const Tensor& by, const Tensor& ref, const Tensor& abs,
           const ToleranceSpec& spec) {
  Side s{name};
  const int64_t n = out.size();
  double mean = 0.0, magnitude = 0.0, worst = 0.0, spreads = 0.0, variance = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += by[i];
  mean = n > 0 ? mean / static_cast<double>(n) : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double spread = element_noise(spec, std::abs(ref[i]), abs[i]);
    s.value += out[i] * by[i];
    worst += std::abs(by[i]) * element_bound(spec, std::abs(ref[i]), abs[i]);
    spreads += spread;
    variance += (spread * (by[i] - mean)) * (spread * (by[i] - mean));
    magnitude += std::abs(out[i] * by[i]);
  }
  const double noise = std::abs(mean) * spreads + kNoiseDeviations * std::sqrt(variance);
  s.bound = std::min(worst, noise) + gamma_n(n + 1, u64()) * magnitude;
  return s;
}

// The backend's outputs for conv(x, w) without bias, g = dy; the case's own run when it
// has no bias.
struct LinearRun {
  bool rerun = false;   // false: the case's own run (no bias) is the linear one
  OpOutputs own;        // the rerun without bias
  Tensor ref_y, abs_y;  // the oracle's y and its absolute pass, without bias
  const OpOutputs& cand(const CheckContext& ctx) const { return rerun ? own : ctx.cand; }
};

StatusOr<LinearRun> linear_run(const CheckContext& ctx, const ConvGeometry& g) {
  LinearRun run;
  if (g.bias) {
    Case c = ctx.c;
    std::get<ConvParams>(c.op).bias = false;
    c.tensors.erase("b");
    c.expected.clear();
    KC_ASSIGN_OR_RETURN(OpGeometry geo, op_geometry(c));
    run.own = invoke(ctx.backend, c, geo, OpInputs{ctx.in.x, ctx.in.w, Tensor{}, ctx.in.dy});
    run.rerun = true;
  }
  ConvGeometry linear = g;
  linear.bias = false;
  run.ref_y = ref::conv_forward(linear, ctx.in.x, ctx.in.w, nullptr);
  run.abs_y = ref::conv_forward(linear, absolute(ctx.in.x), absolute(ctx.in.w), nullptr);
  return run;
}

ToleranceSpec spec_for(const CheckContext& ctx, const char* tensor) {
  ToleranceSpec s = tolerance_for(ctx, tensor);
  if (s.tolerance.kind == ToleranceKind::kExact) s.tolerance.kind = ToleranceKind::kBound;
  return s;
}

// The message naming one pass that breaks the identity: the forward, dx or dw.
const std::array<const char*, 3> kCulprit = {"the forward disagrees with both backward passes; ",
                                             "dx (backward data) is not the adjoint of the forward; ",
                                             "dw (backward weight) is not the adjoint of the forward; "};

// Names the pass that breaks the identity, from which pairs agree (ab, ac, bc). Where one
// pair alone disagrees (the third side's bound is too wide to tell), the side of that
// pair farther from the third is named.
std::string blame(const std::array<Side, 3>& s, bool ab, bool ac, bool bc) {
  auto farther = [&](int i, int j, int k) {
    const double di = std::abs(s[i].value - s[k].value), dj = std::abs(s[j].value - s[k].value);
    return di > dj ? i : dj > di ? j : -1;
  };
  int who = -1;
  if (!ab && !ac && bc) who = 0;
  if (!ab && ac && !bc) who = 1;
  if (ab && !ac && !bc) who = 2;
  if (!ab && ac && bc) who = farther(0, 1, 2);
  if (ab && !ac && bc) who = farther(0, 2, 1);
  if (ab && ac && !bc) who = farther(1, 2, 0);
  return who >= 0 ? kCulprit[static_cast<size_t>(who)] : "the forward and both backward passes disagree; ";
}

// The oracle's value of the three sides (equal in exact arithmetic): <y, g> from its y
// without bias, in f64, with the rounding of that sum as its bound.
Side oracle_side(const LinearRun& run, const Tensor& g) {
  Side s{"the oracle's <y,g>"};
  double magnitude = 0.0;
  for (int64_t i = 0; i < g.size(); ++i) {
    s.value += run.ref_y[i] * g[i];
    magnitude += std::abs(run.ref_y[i] * g[i]);
  }
  s.bound = gamma_n(g.size() + 1, u64()) * magnitude;
  return s;
}

// Where the sides disagree, the oracle says which depart from it: a side beyond its
// bound of the oracle's value is wrong, whatever the other sides agree on. Two passes
// with one bug (a forward and a dw that both scale w) agree with each other, and the
// identity alone would blame the one right pass. Empty when the oracle cannot tell
// (no side, or every side, departs).
std::string blame_by_oracle(const std::array<Side, 3>& s, const std::array<bool, 3>& agree, const Side& truth,
                            bool exact) {
  static const std::array<const char*, 3> pass = {"the forward", "dx (backward data)", "dw (backward weight)"};
  std::vector<size_t> off;
  for (size_t i = 0; i < s.size(); ++i) {
    const double gap = std::abs(s[i].value - truth.value);
    if (exact ? gap != 0.0 : !(gap <= s[i].bound + truth.bound)) off.push_back(i);
  }
  if (off.empty() || off.size() == s.size()) return {};
  if (off.size() == 1) return kCulprit[off[0]];  // what the identity says too, now known
  const std::string both = std::string(pass[off[0]]) + " and " + pass[off[1]];
  const std::string right = pass[3 - off[0] - off[1]];
  if (agree[off[0] + off[1] - 1]) {  // the pair (0,1), (0,2) or (1,2) of judge()
    return both +
           " depart from the oracle's inner product alike (one bug they share: they agree with each other, "
           "not with the oracle), while " +
           right + " matches it; ";
  }
  return both + " each depart from the oracle's inner product, in different ways, while " + right + " matches it; ";
}

CheckResult judge(const CheckContext& ctx, const std::array<Side, 3>& s, bool exact, const LinearRun& run) {
  CheckResult r = make_result(kName, Disposition::kPassed);
  std::array<bool, 3> agree{};  // (0,1), (0,2), (1,2)
  const std::array<std::array<int, 2>, 3> pairs = {{{0, 1}, {0, 2}, {1, 2}}};
  double largest = 0.0, gap = 0.0, largest_bound = 0.0;
  for (const Side& side : s) {
    largest = std::max(largest, std::abs(side.value));
    largest_bound = std::max(largest_bound, side.bound);
  }
  for (size_t k = 0; k < pairs.size(); ++k) {
    const Side &a = s[static_cast<size_t>(pairs[k][0])], &b = s[static_cast<size_t>(pairs[k][1])];
    Tally t;
    t.add(std::string(b.name) + " vs " + a.name, {}, b.value, a.value, exact ? 0.0 : a.bound + b.bound, exact);
    agree[k] = t.failures() == 0;
    t.into(r);
    gap = std::max(gap, std::abs(a.value - b.value));
  }
  const std::string values = std::string(s[0].name) + " = " + num_brief(s[0].value) + ", " + s[1].name + " = " +
                             num_brief(s[1].value) + ", " + s[2].name + " = " + num_brief(s[2].value) +
                             "; relative gap " + num_brief(largest > 0.0 ? gap / largest : 0.0) +
                             (exact ? " (exact: integer fill)" : "");
  if (r.disposition == Disposition::kFailed) {
    const Side truth = oracle_side(run, ctx.in.dy);
    const std::string by_oracle = blame_by_oracle(s, agree, truth, exact);
    r.message = (by_oracle.empty() ? blame(s, agree[0], agree[1], agree[2]) : by_oracle) + values + "; " + truth.name +
                " = " + num_brief(truth.value);
    return r;
  }
  r.message = values;
  if (largest <= (exact ? 0.0 : largest_bound) && ctx.backend.numerics().transform()) {
    // The algorithm's bound, not the data, leaves nothing to judge; forward and backward
    // still compare every pass with the oracle, so no zero-writing kernel passes.
    return make_result(kName, Disposition::kSkipped,
                       "not judged: the three inner products lie within " + algorithm_name(ctx.backend.numerics()) +
                           "'s error bound of zero, which sums every output's allowance (forward and backward "
                           "compare each pass with the oracle instead): " +
                           values);
  }
  if (largest <= (exact ? 0.0 : largest_bound)) {
    return make_result(kName, Disposition::kMistrusted,
                       "all three inner products are within their bounds of zero, so the identity holds "
                       "trivially (all zero, or a case too small for this precision): " +
                           values);
  }
  const std::array<std::pair<const char*, const Tensor*>, 3> relied = {
      {{"y", &run.ref_y}, {"dx", &ctx.ref.dx}, {"dw", &ctx.ref.dw}}};
  for (const auto& [name, t] : relied) {
    if (std::string why = distrust_output(ctx.geo, name, *t); !why.empty()) {
      return make_result(kName, Disposition::kMistrusted, why + "; " + values);
    }
  }
  return r;
}

}  // namespace

std::string adjoint_not_applicable(const CheckContext& ctx) { return nonfinite_values(ctx); }

CheckResult adjoint_run(const CheckContext& ctx) {
  const ConvGeometry& g = *conv_geo(ctx);
  StatusOr<LinearRun> run = linear_run(ctx, g);
  if (!run.ok()) {
    return make_result(kName, Disposition::kFailed, "the case without bias: " + run.status().to_string());
  }
  const OpOutputs& o = run->cand(ctx);
  if (!o.forward.ok()) return call_failed(kName, "forward without bias", o.forward);
  if (!o.backward.ok()) return call_failed(kName, "backward without bias", o.backward);
  if (o.y.shape != g.y_shape() || o.dx.shape != g.x_shape() || o.dw.shape != g.w_shape()) {
    return make_result(kName, Disposition::kFailed,
                       "outputs do not have the contract's shapes (the shape check says more)");
  }
  // A transform rounds integer data too: its sides are judged by its bound.
  const bool exact = ctx.c.data.fill == Fill::kInteger && ctx.c.tolerance.kind == ToleranceKind::kExact &&
                     !ctx.backend.numerics().transform();
  const std::array<Side, 3> sides = {
      inner("<conv(x,w),g>", o.y, ctx.in.dy, run->ref_y, run->abs_y, spec_for(ctx, "y")),
      inner("<x,dx(g,w)>", o.dx, ctx.in.x, ctx.ref.dx, ctx.abs.dx, spec_for(ctx, "dx")),
      inner("<w,dw(x,g)>", o.dw, ctx.in.w, ctx.ref.dw, ctx.abs.dw, spec_for(ctx, "dw")),
  };
  return judge(ctx, sides, exact, *run);
}

}  // namespace kc::checks
