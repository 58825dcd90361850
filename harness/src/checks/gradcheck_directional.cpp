// gradcheck's directional path for large cases: v^T J u along random directions (and one
// aimed at the backend's departure from the oracle), each tensor's part scaled to carry
// the same share of the tolerance; a failed direction is attributed to the tensors that
// disagree on their own. The method: gradcheck.cpp.
#include <algorithm>
#include <cmath>

#include "common.h"
#include "gradcheck_fd.h"

namespace kc::checks::fd {
namespace {

constexpr uint64_t kDirectionStream = 0x67726164;  // apart from the fill's streams

// Tensor t of direction k before scaling: uniform in [-1, 1) from the case seed, or for
// the aimed direction the sign of the backend's departure from the oracle. The elements
// of a group of tied maxima (Problem::tie_group) get one value: the first element's
// draw, or the sign of the group's summed departure.
Tensor raw_direction(const Problem& p, int k, int t, const Dims& shape) {
  Tensor u = Tensor::zeros(DType::kF64, shape);
  const bool grouped = t == 0 && !p.tie_group.empty();
  auto group = [&](int64_t i) { return grouped ? p.tie_group[static_cast<size_t>(i)] : i; };
  if (k != p.aimed) {
    for (int64_t i = 0; i < u.size(); ++i) {
      u[i] = 2.0 * uniform01(p.ctx.c.data.seed, kDirectionStream + 3 * k + t, static_cast<uint64_t>(group(i))) - 1.0;
    }
    return u;
  }
  Tensor d = Tensor::zeros(DType::kF64, shape);  // the departure, summed at each group's first element
  for (int64_t i = 0; i < u.size(); ++i) d[group(i)] += grad_of(p.ctx.cand, t)[i] - grad_of(p.ctx.ref, t)[i];
  for (int64_t i = 0; i < u.size(); ++i) {
    const double di = d[group(i)];
    u[i] = di > 0.0 ? 1.0 : di < 0.0 ? -1.0 : std::isnan(di) ? 1.0 : 0.0;
  }
  return u;
}

// Direction k, each tensor's part scaled so that sum_i |u_i| bound_i = 1 (bound: the
// tolerance model; the absolute pass where that is 0, as under `exact`). `which`
// masks tensors out (bit t for tensor t).
Params direction(const Problem& p, const Params& theta, int k, unsigned which) {
  Params u;
  for (int t = 0; t < 3; ++t) {
    if (theta[t].size() == 0) continue;  // zeros() of an empty shape would hold one element
    if (!(which >> t & 1u)) {
      u[t] = Tensor::zeros(DType::kF64, theta[t].shape);
      continue;
    }
    u[t] = raw_direction(p, k, t, theta[t].shape);
    const Tensor &ref = grad_of(p.ctx.ref, t), &abs = grad_of(p.ctx.abs, t);
    const ToleranceSpec spec = tolerance_for(p.ctx, kGrad[t]);
    double bounded = 0.0, mass = 0.0, plain = 0.0;
    for (int64_t i = 0; i < u[t].size(); ++i) {
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

Projection project(const Problem& p, const Params& u) {
  const CheckContext& ctx = p.ctx;
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
      if (p.slack[t].size() > 0) pr.bound += std::abs(u[t][i]) * p.slack[t][i];
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
  return {probe(p, at, h), project(p, u)};
}

bool direction_passes(const DirectionResult& d) {
  return !d.probe.kink && std::abs(d.analytic.value - d.probe.value) <= d.analytic.bound + difference_error(d.probe);
}

// After direction k failed: which tensors' gradients disagree on their own.
std::string attribute(const Problem& p, int k) {
  std::string blame;
  for (int t = 0; t < 3; ++t) {
    if (grad_of(p.ctx.ref, t).size() == 0) continue;  // the op has no such input
    const DirectionResult d = run_direction(p, k, 1u << t);
    if (!d.probe.kink && !direction_passes(d)) blame += std::string(blame.empty() ? "" : ", ") + kGrad[t];
  }
  return blame.empty() ? "no single tensor disagrees on its own" : "the disagreement is in " + blame;
}

}  // namespace

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
    const double bound = d.analytic.bound + difference_error(d.probe);
    out.tally.add("<grad,u>", {k}, d.analytic.value, d.probe.value, bound);
    if (first_bad < 0 && !direction_passes(d)) first_bad = k;
  }
  if (first_bad >= 0) out.notes.push_back(attribute(p, first_bad));
}

bool aimed_direction_applies(const CheckContext& ctx) {
  if (ctx.is_reference) return false;
  for (int t = 0; t < 3; ++t) {
    if (!bitwise_equal(grad_of(ctx.cand, t), grad_of(ctx.ref, t))) return true;
  }
  return false;
}

}  // namespace kc::checks::fd
