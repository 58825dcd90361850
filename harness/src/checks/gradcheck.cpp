// gradcheck: the backend's analytic gradients against central finite differences of
// the oracle's forward in f64 (kc::ref: the backend's own low-precision forward is too
// noisy to difference), for the loss L(x, w, b) = <f(x, w, b), dy>.
//
//  - Small cases (GradcheckOptions::full_limit): every element of x, w, b is
//    differenced and compared with its gradient for the case's dy (dy^T J). With at
//    most GradcheckOptions::row_limit outputs, the full Jacobian too: the backend's
//    backward is run once per output j with the unit cotangent dy = e_j (row j of J),
//    and every entry is compared with the same differences of y_j. One dy can hide a
//    backward that reads dy wrongly (a constant dy hides a layout mix-up); the rows
//    cannot. Larger cases: directional derivatives
//    v^T J u along random directions u over x, w and b at once (seeded by the case
//    seed), compared with <grad, u>. Each tensor's part of u is scaled so that it
//    carries the same share of the tolerance (sum_i |u_i| bound_i = 1): a large dw
//    bound cannot hide a dx error.
//    A random projection averages an error over M elements (it grows like sqrt(M), the
//    worst-case bound like M), so on a candidate one more direction is aimed:
//    u_i = sign(cand_i - oracle_i), where the backend's gradient departs from the
//    oracle's backward. It is judged by the same finite differences, so a backend
//    that is right and an oracle that is wrong still agree along it.
//  - Every difference is Richardson-extrapolated, R = (4 D(h/2) - D(h)) / 3, from
//    central differences D(h) = (L(+h) - L(-h)) / 2h.
//  - conv is bilinear in (x, w, b), so the first step can be large (2^-4 of the
//    tensor's scale): a central difference of a quadratic is exact, only rounding is
//    left. relu and max pool are piecewise: a step that changes the relu mask or an
//    argmax is shrunk until it does not; a probe with no usable step is counted as
//    non-differentiable, never failed. If every probe is, the check is MISTRUSTED.
//  - Allowed error of a probe: the tolerance model on the analytic gradient (for a
//    direction sum_i |u_i| bound_i, plus the rounding of <grad, u>) + the f64 rounding
//    of the losses over the step + the truncation estimate |D(h) - D(h/2)|.
#include "gradcheck.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include "check_list.h"
#include "check_math.h"
#include "common.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"

namespace kc::checks {
namespace {

constexpr std::array<const char*, 3> kGrad = {"dx", "dw", "db"};
constexpr std::array<const char*, 3> kWrt = {"x", "w", "b"};
constexpr double kStep = 0x1p-4;        // first step, relative to the tensor's scale
constexpr double kStepFloor = 0x1p-26;  // a probe needing a smaller fraction is at a kink
constexpr int kMaxTries = 8;
constexpr uint64_t kDirectionStream = 0x67726164;  // apart from the fill's streams

using Params = std::array<Tensor, 3>;  // x, w, b; w and b empty where the op has none

const Tensor& grad_of(const OpOutputs& o, int t) { return t == 0 ? o.dx : t == 1 ? o.dw : o.db; }

// The scale steps are taken relative to. Below 2^-900 (all zero, or subnormal data) it
// is 1: the smallest step, scale * kStep * kStepFloor, must stay a normal number, or the
// step underflows to 0 and every difference quotient is 0/0.
double scale_of(const Tensor& t) {
  double m = 0.0;
  for (double v : t.data) m = std::max(m, std::abs(v));
  return m > 0x1p-900 ? m : 1.0;
}

// The oracle's loss at some inputs, and what decides where its kinks are.
struct Eval {
  double loss = 0.0;
  Tensor out;                        // the op's output y, kept for the Jacobian's rows
  Tensor z;                          // conv_bias_relu: the relu's input
  std::optional<IndexTensor> index;  // max pool: the argmax
};

// Row j of the Jacobian: the backward of the backend and of the oracle (values and the
// absolute pass) for the unit cotangent dy = e_j.
struct Row {
  OpOutputs cand, ref, abs;
};

struct Problem {
  const CheckContext& ctx;
  Tensor z0;                // conv_bias_relu: the relu's input at the case's inputs
  double loss_error = 0.0;  // bound on the f64 rounding of one loss
  int aimed = -1;           // the index of the aimed direction, -1 without one
  std::vector<Row> rows;    // the Jacobian's rows, empty when only dy^T J is checked
  std::vector<double> output_error;  // with rows: bound on the f64 rounding of each y_j
};

Eval evaluate(const Problem& p, const Params& q) {
  Eval e;
  const Tensor& dy = p.ctx.in.dy;
  const bool keep = !p.rows.empty();
  if (const PoolGeometry* g = pool_geo(p.ctx)) {
    ref::PoolForward f = ref::maxpool_forward(*g, q[0]);
    e.loss = dot(f.y, dy);
    e.index = std::move(f.indices);
    if (keep) e.out = std::move(f.y);
    return e;
  }
  const ConvGeometry& g = *conv_geo(p.ctx);
  Tensor y = ref::conv_forward(g, q[0], q[1], g.bias ? &q[2] : nullptr);
  if (!is_fused(p.ctx.c)) {
    e.loss = dot(y, dy);
    if (keep) e.out = std::move(y);
    return e;
  }
  for (int64_t i = 0; i < y.size(); ++i) e.loss += y[i] > 0.0 ? y[i] * dy[i] : 0.0;
  if (keep) {  // y = relu(z)
    e.out = y;
    for (double& v : e.out.data) v = std::max(v, 0.0);
  }
  e.z = std::move(y);
  return e;
}

bool same_piece(const Eval& a, const Eval& b) {
  if (a.index) return a.index->data == b.index->data;
  for (int64_t i = 0; i < a.z.size(); ++i) {
    if ((a.z[i] > 0.0) != (b.z[i] > 0.0)) return false;
  }
  return true;
}

// A step that should keep every relu input on its side: z moves about linearly with the
// step, so the inputs that changed side bound it (0 when one sits exactly at the kink).
// Max-pool gaps are not tracked: the step just shrinks.
double smaller_step(const Problem& p, const Eval& plus, const Eval& minus, double h) {
  if (plus.index) return h / 16.0;
  double safe = h;
  for (int64_t i = 0; i < plus.z.size(); ++i) {
    if ((plus.z[i] > 0.0) == (minus.z[i] > 0.0)) continue;
    safe = std::min(safe, std::abs(p.z0[i]) * 2.0 * h / std::abs(plus.z[i] - minus.z[i]));
  }
  return std::min(safe / 4.0, h / 2.0);
}

struct Probe {
  bool kink = true;
  double h = 0.0, d = 0.0, d_half = 0.0, value = 0.0;
  std::vector<double> row_d, row_d_half;  // with rows: D(h) and D(h/2) of every y_j
};

// The Richardson-extrapolated central difference of the loss along at(s) = inputs + s*u.
Probe probe(const Problem& p, const std::function<Params(double)>& at, double h) {
  const double floor = h * kStepFloor;
  Probe r;
  for (int tries = 0; tries < kMaxTries && h >= floor; ++tries) {
    const Eval plus = evaluate(p, at(h)), minus = evaluate(p, at(-h));
    if (!same_piece(plus, minus)) {
      h = smaller_step(p, plus, minus, h);
      continue;
    }
    const Eval plus2 = evaluate(p, at(h / 2.0)), minus2 = evaluate(p, at(-h / 2.0));
    if (!same_piece(plus2, minus2) || !same_piece(plus, plus2)) {  // z is quadratic along mixed u
      h /= 16.0;
      continue;
    }
    r = Probe{false, h, (plus.loss - minus.loss) / (2.0 * h), (plus2.loss - minus2.loss) / h, 0.0, {}, {}};
    r.value = (4.0 * r.d_half - r.d) / 3.0;
    for (int64_t j = 0; j < plus.out.size(); ++j) {
      r.row_d.push_back((plus.out[j] - minus.out[j]) / (2.0 * h));
      r.row_d_half.push_back((plus2.out[j] - minus2.out[j]) / h);
    }
    return r;
  }
  return r;
}

// The difference's own error: R weighs each loss's rounding by at most 3/h (times 2 for
// safety), plus the truncation estimate.
double difference_error(const Problem& p, const Probe& r) {
  return 6.0 * p.loss_error / r.h + std::abs(r.d - r.d_half);
}

Problem make_problem(const CheckContext& ctx) {
  Problem p{ctx, {}, 0.0, -1, {}, {}};
  // Every term of the loss is at most |y|_abs * |dy|: each y within gamma(n_y) of its
  // absolute sum, then a sum over the outputs, then the rounding of the perturbed
  // inputs. The factor 2 covers the step's growth of |x|, |w|, |b|. Products that
  // underflow err absolutely, by up to the underflow unit each (subnormal data).
  const double s = abs_dot(ctx.abs.y, ctx.in.dy);
  const int64_t n = tolerance_for(ctx, "y").n + ctx.in.dy.size() + 8;
  p.loss_error = 2.0 * (gamma_n(n, u64()) * s + static_cast<double>(n) * underflow_unit(DType::kF64));
  if (is_fused(ctx.c)) p.z0 = ref::conv_forward(*conv_geo(ctx), ctx.in.x, ctx.in.w, &ctx.in.b);
  return p;
}

struct Outcome {
  Tally tally;
  int64_t probes = 0, kinks = 0;
  int64_t row_failures = 0;  // of them in the Jacobian's rows
  std::vector<std::string> notes;  // which tensors disagree
};

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// Entry (j, i) of row j against the difference of y_j along element i of tensor t: the
// tolerance model on the row's gradient plus the difference's own error for y_j.
void compare_row_entries(const Problem& p, int t, int64_t i, const Probe& r, const ToleranceSpec& spec,
                         Tally& tally) {
  const Tensor& y = p.ctx.ref.y;
  for (size_t j = 0; j < p.rows.size(); ++j) {
    const Row& row = p.rows[j];
    const double value = (4.0 * r.row_d_half[j] - r.row_d[j]) / 3.0;
    const double error = 6.0 * p.output_error[j] / r.h + std::abs(r.row_d[j] - r.row_d_half[j]);
    const double bound = element_bound(spec, std::abs(grad_of(row.ref, t)[i]), grad_of(row.abs, t)[i]) + error;
    std::vector<int64_t> at = unflatten(static_cast<int64_t>(j), y.shape);
    const std::vector<int64_t> in = unflatten(i, grad_of(row.cand, t).shape);
    at.insert(at.end(), in.begin(), in.end());
    tally.add(std::string("J(y,") + kWrt[t] + ")", std::move(at), grad_of(row.cand, t)[i], value, bound);
  }
}

void full_jacobian(const Problem& p, Outcome& out) {
  const CheckContext& ctx = p.ctx;
  const Params theta = {ctx.in.x, ctx.in.w, ctx.in.b};
  for (int t = 0; t < 3; ++t) {
    if (theta[t].size() == 0) continue;
    const Tensor &cand = grad_of(ctx.cand, t), &ref = grad_of(ctx.ref, t), &abs = grad_of(ctx.abs, t);
    const ToleranceSpec spec = tolerance_for(ctx, kGrad[t]);
    const double h = kStep * scale_of(theta[t]);
    Tally rows;  // the Jacobian's entries for this tensor
    const int64_t failed_before = out.tally.failures();
    for (int64_t i = 0; i < theta[t].size(); ++i) {
      auto at = [&](double s) {
        Params q = theta;
        q[t][i] += s;
        return q;
      };
      const Probe r = probe(p, at, h);
      ++out.probes;
      if (r.kink) {
        ++out.kinks;
        continue;
      }
      const double bound = element_bound(spec, std::abs(ref[i]), abs[i]) + difference_error(p, r);
      out.tally.add(kGrad[t], unflatten(i, cand.shape), cand[i], r.value, bound);
      compare_row_entries(p, t, i, r, spec, rows);
    }
    if (const int64_t bad = out.tally.failures() - failed_before; bad > 0) {
      out.notes.push_back(std::string(kGrad[t]) + ": " + std::to_string(bad) + " of " +
                          std::to_string(theta[t].size()) + " elements disagree");
    }
    if (rows.failures() > 0) {
      out.notes.push_back(std::string("J(y,") + kWrt[t] + "), the backward of one output's unit dy at a time: " +
                          std::to_string(rows.failures()) + " of " + std::to_string(rows.count()) +
                          " entries disagree");
      out.row_failures += rows.failures();
    }
    out.tally.merge(rows);
  }
  if (out.row_failures > 0 && out.row_failures == out.tally.failures()) {
    out.notes.push_back("the gradients for the case's dy agree, the Jacobian's rows do not: the backward "
                        "combines dy wrongly in a way this dy hides (a constant dy hides dy read in the "
                        "wrong layout or position)");
  }
}

// Element i of tensor t in direction k before scaling: uniform in [-1, 1) from the case
// seed, or for the aimed direction the sign of the backend's departure from the oracle.
double raw_direction(const Problem& p, int k, int t, int64_t i) {
  if (k != p.aimed) return 2.0 * uniform01(p.ctx.c.data.seed, kDirectionStream + 3 * k + t, static_cast<uint64_t>(i)) - 1.0;
  const double d = grad_of(p.ctx.cand, t)[i] - grad_of(p.ctx.ref, t)[i];
  return d > 0.0 ? 1.0 : d < 0.0 ? -1.0 : std::isnan(d) ? 1.0 : 0.0;
}

// Direction k, each tensor's part scaled so that sum_i |u_i| bound_i = 1 (bound: the
// tolerance model; the absolute pass where that is 0, as under `exact`). `which`
// masks tensors out (bit t for tensor t).
Params direction(const Problem& p, const Params& theta, int k, unsigned which) {
  Params u;
  for (int t = 0; t < 3; ++t) {
    if (theta[t].size() == 0) continue;  // zeros() of an empty shape would hold one element
    u[t] = Tensor::zeros(DType::kF64, theta[t].shape);
    if (!(which >> t & 1u)) continue;
    const Tensor &ref = grad_of(p.ctx.ref, t), &abs = grad_of(p.ctx.abs, t);
    const ToleranceSpec spec = tolerance_for(p.ctx, kGrad[t]);
    double bounded = 0.0, mass = 0.0, plain = 0.0;
    for (int64_t i = 0; i < u[t].size(); ++i) {
      u[t][i] = raw_direction(p, k, t, i);
      bounded += std::abs(u[t][i]) * element_bound(spec, std::abs(ref[i]), abs[i]);
      mass += std::abs(u[t][i]) * abs[i];
      plain += std::abs(u[t][i]);
    }
    const double unit = bounded > 0.0 ? 1.0 / bounded : mass > 0.0 ? 1.0 / mass : plain > 0.0 ? 1.0 / plain : 1.0;
    for (double& v : u[t].data) v *= unit;
  }
  return u;
}

// <grad, u> of the backend, and what the tolerance model allows it to be off by.
struct Projection {
  double value = 0.0, bound = 0.0;
};

Projection project(const CheckContext& ctx, const Params& u) {
  Projection pr;
  double magnitude = 0.0;
  int64_t terms = 0;
  for (int t = 0; t < 3; ++t) {
    if (u[t].size() == 0) continue;
    const Tensor &cand = grad_of(ctx.cand, t), &ref = grad_of(ctx.ref, t), &abs = grad_of(ctx.abs, t);
    const ToleranceSpec spec = tolerance_for(ctx, kGrad[t]);
    for (int64_t i = 0; i < u[t].size(); ++i) {
      pr.value += cand[i] * u[t][i];
      pr.bound += std::abs(u[t][i]) * element_bound(spec, std::abs(ref[i]), abs[i]);
      magnitude += std::abs(cand[i] * u[t][i]);
    }
    terms += u[t].size();
  }
  pr.bound += gamma_n(terms + 1, u64()) * magnitude;  // our own f64 sum
  return pr;
}

struct DirectionResult {
  Probe probe;
  Projection analytic;
};

DirectionResult run_direction(const Problem& p, int k, unsigned which) {
  const Params theta = {p.ctx.in.x, p.ctx.in.w, p.ctx.in.b};
  const Params u = direction(p, theta, k, which);
  double h = INFINITY;  // the largest step that moves no tensor by more than kStep of its scale
  for (int t = 0; t < 3; ++t) {
    const bool moves = std::any_of(u[t].data.begin(), u[t].data.end(), [](double v) { return v != 0.0; });
    if (moves) h = std::min(h, kStep * scale_of(theta[t]) / scale_of(u[t]));
  }
  if (!std::isfinite(h)) h = kStep;  // u = 0: every difference is 0, as is <grad, u>
  auto at = [&](double s) {
    Params q = theta;
    for (int t = 0; t < 3; ++t) {
      for (int64_t i = 0; i < q[t].size(); ++i) q[t][i] += s * u[t][i];
    }
    return q;
  };
  return {probe(p, at, h), project(p.ctx, u)};
}

bool direction_passes(const Problem& p, const DirectionResult& d) {
  return !d.probe.kink && std::abs(d.analytic.value - d.probe.value) <= d.analytic.bound + difference_error(p, d.probe);
}

// After direction k failed: which tensors' gradients disagree on their own.
std::string attribute(const Problem& p, int k) {
  std::string blame;
  for (int t = 0; t < 3; ++t) {
    if (grad_of(p.ctx.ref, t).size() == 0) continue;  // the op has no such input
    const DirectionResult d = run_direction(p, k, 1u << t);
    if (!d.probe.kink && !direction_passes(p, d)) blame += std::string(blame.empty() ? "" : ", ") + kGrad[t];
  }
  return blame.empty() ? "no single tensor disagrees on its own" : "the disagreement is in " + blame;
}

void directional(const Problem& p, int count, Outcome& out) {
  std::vector<DirectionResult> results(static_cast<size_t>(count));
  parallel_for(count, [&](int k) { results[static_cast<size_t>(k)] = run_direction(p, k, 7u); });
  int first_bad = -1;
  for (int k = 0; k < count; ++k) {
    const DirectionResult& d = results[static_cast<size_t>(k)];
    ++out.probes;
    if (d.probe.kink) {
      ++out.kinks;
      continue;
    }
    const double bound = d.analytic.bound + difference_error(p, d.probe);
    out.tally.add("<grad,u>", {k}, d.analytic.value, d.probe.value, bound);
    if (first_bad < 0 && !direction_passes(p, d)) first_bad = k;
  }
  if (first_bad >= 0) out.notes.push_back(attribute(p, first_bad));
}

// The aimed direction needs a candidate whose gradients differ from the oracle's somewhere.
bool aimed_direction_applies(const CheckContext& ctx) {
  if (ctx.is_reference) return false;
  for (int t = 0; t < 3; ++t) {
    if (!bitwise_equal(grad_of(ctx.cand, t), grad_of(ctx.ref, t))) return true;
  }
  return false;
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
std::optional<CheckResult> add_rows(Problem& p) {
  const CheckContext& ctx = p.ctx;
  auto oracle = make_reference_backend();
  OpInputs in = ctx.in;  // a small case: the copies are cheap
  in.dy = Tensor::zeros(ctx.in.dy.dtype, ctx.in.dy.shape);
  const int64_t n = tolerance_for(ctx, "y").n + 8;
  for (int64_t j = 0; j < in.dy.size(); ++j) {
    in.dy[j] = 1.0;
    Row row;
    row.ref = invoke(*oracle, ctx.c, ctx.geo, in);
    row.abs = absolute_pass(ctx.c, ctx.geo, in, row.ref);
    row.cand = ctx.is_reference ? row.ref : invoke(ctx.backend, ctx.c, ctx.geo, in);
    in.dy[j] = 0.0;
    const std::string which = " for the unit dy of output " + dims_to_string(unflatten(j, in.dy.shape));
    if (!row.cand.forward.ok()) return call_failed("gradcheck", "forward" + which, row.cand.forward);
    if (!row.cand.backward.ok()) return call_failed("gradcheck", "backward" + which, row.cand.backward);
    if (std::string bad = shape_problem(ctx, row.cand); !bad.empty()) {
      return make_result("gradcheck", Disposition::kFailed, bad + which);
    }
    p.rows.push_back(std::move(row));
    // y_j's own f64 rounding, as for the loss (make_problem) with one term.
    p.output_error.push_back(2.0 * (gamma_n(n, u64()) * ctx.abs.y[j] +
                                    static_cast<double>(n) * underflow_unit(DType::kF64)));
  }
  return std::nullopt;
}

CheckResult conclude(const CheckContext& ctx, Outcome& out, const std::string& how) {
  const std::string kinks = out.kinks == 0 ? "" : std::to_string(out.kinks) + " of " +
      std::to_string(out.probes) + " probes non-differentiable (every usable step changes the relu mask or an argmax)";
  if (out.tally.count() == 0) {
    return make_result("gradcheck", Disposition::kMistrusted,
                       how + ": every probe is non-differentiable, nothing could be differenced; " + kinks);
  }
  CheckResult r = make_result("gradcheck", Disposition::kPassed);
  out.tally.into(r);
  if (r.disposition == Disposition::kFailed) {
    if (!kinks.empty()) out.notes.push_back(kinks);
    r.message = how + ": " + std::to_string(out.tally.failures()) + " of " + std::to_string(out.tally.count()) +
                " comparisons disagree with f64 finite differences of the oracle (max error/bound " +
                num(r.max_error_ratio) + "); " + joined(out.notes);
    return r;
  }
  r.message = how + ": gradients match f64 finite differences of the oracle (max error/bound " +
              num(r.max_error_ratio) + ")" + (kinks.empty() ? "" : "; " + kinks);
  for (int t = 0; t < 3; ++t) {
    if (grad_of(ctx.ref, t).size() == 0) continue;
    if (std::string why = distrust(kGrad[t], grad_of(ctx.ref, t)); !why.empty()) {
      return make_result("gradcheck", Disposition::kMistrusted, why + " (" + r.message + ")");
    }
  }
  return r;
}

}  // namespace

std::string gradcheck_not_applicable(const CheckContext& ctx) {
  if (const PoolGeometry* g = pool_geo(ctx); g && g->mode == PoolMode::kInference) {
    return "inference mode keeps no indices, so there is no backward to check";
  }
  return nonfinite_inputs(ctx);
}

CheckResult gradcheck_with(const CheckContext& ctx, const GradcheckOptions& options) {
  if (!ctx.cand.forward.ok()) return call_failed("gradcheck", "forward", ctx.cand.forward);
  if (!ctx.cand.backward.ok()) return call_failed("gradcheck", "backward", ctx.cand.backward);
  if (std::string bad = shape_problem(ctx, ctx.cand); !bad.empty()) {
    return make_result("gradcheck", Disposition::kFailed, bad + " (the shape check says more)");
  }
  Problem p = make_problem(ctx);
  Outcome out;
  const int64_t elements = ctx.in.x.size() + ctx.in.w.size() + ctx.in.b.size();
  if (elements <= options.full_limit) {
    const int64_t outputs = ctx.in.dy.size();
    std::string how = "every element of x, w, b (" + std::to_string(elements) + ")";
    if (outputs <= options.row_limit) {
      if (std::optional<CheckResult> stop = add_rows(p)) return *stop;
      how += ", for the case's dy and as the full Jacobian (" + std::to_string(outputs) + " rows)";
    } else {
      how += " for the case's dy (" + std::to_string(outputs) + " outputs: too many for the full Jacobian)";
    }
    full_jacobian(p, out);
    return conclude(ctx, out, how);
  }
  const int count = std::max(4, options.directions);
  p.aimed = aimed_direction_applies(ctx) ? count : -1;
  directional(p, count + (p.aimed >= 0), out);
  return conclude(ctx, out, std::to_string(count) + " random directions v^T J u" +
                                (p.aimed >= 0 ? " and 1 aimed at the backend's departure from the oracle's backward" : ""));
}

CheckResult gradcheck_run(const CheckContext& ctx) { return gradcheck_with(ctx, GradcheckOptions{}); }

}  // namespace kc::checks
