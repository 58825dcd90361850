// Finite differences for gradcheck: see gradcheck_fd.h; the method and its error model
// are described in gradcheck.cpp.
#include "gradcheck_fd.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common.h"
#include "kc/ref/conv.h"
#include "ops/op_module.h"
#include "window.h"

namespace kc::checks::fd {
namespace {

constexpr double kStepFloor = 0x1p-26;  // a probe needing a smaller fraction is at a kink
constexpr int kMaxTries = 8;

bool left_out(const Problem& p, int64_t i) { return !p.left_out.empty() && p.left_out[static_cast<size_t>(i)]; }

// The oracle's loss at some inputs, and what decides where its kinks are.
struct Eval {
  double loss = 0.0;
  Tensor out;                        // the op's output y, kept for the Jacobian's rows
  Tensor z;                          // conv_bias_relu: the relu's input
  std::optional<IndexTensor> index;  // max pool: the argmax
};

uint64_t memo_digest(const Eval& e) {
  checks::MemoKey k("fd.eval");
  k.add(e.loss).add(e.out).add(e.z);
  if (e.index) k.add(*e.index);
  return k.value();
}

size_t memo_bytes(const Eval& e) {
  return (e.out.data.size() + e.z.data.size() + (e.index ? e.index->data.size() : 0)) * sizeof(double);
}

Eval evaluate_now(const Problem& p, const Params& q) {
  Eval e;
  const Tensor& dy = p.ctx.in.dy;
  const bool keep = !p.rows.empty();
  OracleForward f = std::visit([&](const auto& g) { return oracle_forward(g, q[0], q[1], q[2]); }, p.ctx.geo);
  e.index = std::move(f.indices);
  Tensor y = std::move(f.y);
  if (!op_traits(p.ctx.c).relu) {
    e.loss = dot(y, dy);
    if (keep) e.out = std::move(y);
    return e;
  }
  for (int64_t i = 0; i < y.size(); ++i) {
    if (!left_out(p, i)) e.loss += y[i] > 0.0 ? y[i] * dy[i] : 0.0;
  }
  if (keep) {  // y = relu(z)
    e.out = y;
    for (double& v : e.out.data) v = std::max(v, 0.0);
  }
  e.z = std::move(y);
  return e;
}

// The oracle's loss at q, or the one the memo kept from another backend's probes of
// this case (the same inputs, cotangent, outputs left out and rows).
Eval evaluate(const Problem& p, const Params& q) {
  if (p.ctx.memo == nullptr) return evaluate_now(p, q);
  checks::MemoKey key("fd.evaluate");
  key.add(q[0]).add(q[1]).add(q[2]).add(p.ctx.in.dy).add(p.left_out).add(static_cast<int64_t>(!p.rows.empty()));
  return p.ctx.memo->get<Eval>(key.value(), [&] { return evaluate_now(p, q); });
}

// |a| and |b| element by element, the larger: for a = q + hu and b = q - hu that is
// |q| + h|u|, which bounds |q + su| for every |s| <= h.
Params envelope(const Params& a, const Params& b) {
  Params e = a;
  for (int t = 0; t < 3; ++t) {
    for (int64_t i = 0; i < e[t].size(); ++i) e[t][i] = std::max(std::abs(a[t][i]), std::abs(b[t][i]));
  }
  return e;
}

// The f64 rounding of the losses (and outputs) a probe differenced, from the absolute
// pass at the envelope of its step: every y_j within gamma(n_y) of its absolute sum
// (a conv over |x|, |w|, |b|, which bounds the relu's output too; a max pool's y is a
// selection, bounded by the window's largest |x|), then the sum over the outputs.
// Taken at the envelope rather than at the case's inputs: the step is relative to each
// tensor's scale, so an element far smaller than the scale can grow by orders of
// magnitude. The factor 2 is for safety. Products that underflow err absolutely, by up
// to the underflow unit each (subnormal data).
void rounding_at(const Problem& p, const Params& env, Probe& r) {
  const CheckContext& ctx = p.ctx;
  auto forward = [&] {
    return std::visit([&](const auto& g) { return oracle_forward(g, env[0], env[1], env[2]).y; }, ctx.geo);
  };
  const Tensor abs_y =
      ctx.memo == nullptr
          ? forward()
          : ctx.memo->get<Tensor>(checks::MemoKey("fd.envelope").add(env[0]).add(env[1]).add(env[2]).value(), forward);
  const int64_t n_y = tolerance_for(ctx, "y").n + 8, n = n_y + ctx.in.dy.size();
  const double tiny = underflow_unit(DType::kF64);
  r.loss_error = 2.0 * (gamma_n(n, u64()) * abs_dot(abs_y, ctx.in.dy) + static_cast<double>(n) * tiny);
  if (p.rows.empty()) return;
  for (int64_t j = 0; j < abs_y.size(); ++j) {
    r.output_error.push_back(2.0 * (gamma_n(n_y, u64()) * abs_y[j] + static_cast<double>(n_y) * tiny));
  }
}

bool same_piece(const Problem& p, const Eval& a, const Eval& b) {
  if (a.index) return a.index->data == b.index->data;
  for (int64_t i = 0; i < a.z.size(); ++i) {
    if (!left_out(p, i) && (a.z[i] > 0.0) != (b.z[i] > 0.0)) return false;
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
    if (left_out(p, i) || (plus.z[i] > 0.0) == (minus.z[i] > 0.0)) continue;
    safe = std::min(safe, std::abs(p.z0[i]) * 2.0 * h / std::abs(plus.z[i] - minus.z[i]));
  }
  return std::min(safe / 4.0, h / 2.0);
}

}  // namespace

double scale_of(const Tensor& t) {
  double m = 0.0;
  for (double v : t.data) m = std::max(m, std::abs(v));
  return m > 0x1p-900 ? m : 1.0;
}

// The Richardson-extrapolated central difference of the loss along at(s) = inputs + s*u.
Probe probe(const Problem& p, const std::function<Params(double)>& at, double h) {
  const double floor = h * kStepFloor;
  Probe r;
  for (int tries = 0; tries < kMaxTries && h >= floor; ++tries) {
    const Params at_plus = at(h), at_minus = at(-h);
    const Eval plus = evaluate(p, at_plus), minus = evaluate(p, at_minus);
    if (!same_piece(p, plus, minus)) {
      h = smaller_step(p, plus, minus, h);
      continue;
    }
    const Eval plus2 = evaluate(p, at(h / 2.0)), minus2 = evaluate(p, at(-h / 2.0));
    if (!same_piece(p, plus2, minus2) || !same_piece(p, plus, plus2)) {  // z is quadratic along mixed u
      h /= 16.0;
      continue;
    }
    r = Probe{false, h, (plus.loss - minus.loss) / (2.0 * h), (plus2.loss - minus2.loss) / h, 0.0, {}, {}, 0.0, {}};
    r.value = (4.0 * r.d_half - r.d) / 3.0;
    for (int64_t j = 0; j < plus.out.size(); ++j) {
      r.row_d.push_back((plus.out[j] - minus.out[j]) / (2.0 * h));
      r.row_d_half.push_back((plus2.out[j] - minus2.out[j]) / h);
    }
    rounding_at(p, envelope(at_plus, at_minus), r);
    return r;
  }
  return r;
}

// The difference's own error: R weighs each loss's rounding by at most 3/h (times 2 for
// safety), plus the truncation estimate.
double difference_error(const Probe& r) { return 6.0 * r.loss_error / r.h + std::abs(r.d - r.d_half); }

std::vector<int64_t> tie_groups(const PoolGeometry& g, const Tensor& x) {
  // Union-find over the elements of x; a group's root is its smallest index.
  std::vector<int64_t> first(static_cast<size_t>(x.size()));
  auto up = [&](int64_t i) -> int64_t& { return first[static_cast<size_t>(i)]; };
  for (int64_t i = 0; i < x.size(); ++i) up(i) = i;
  auto root = [&](int64_t i) {
    while (up(i) != i) i = up(i) = up(up(i));  // path halving
    return i;
  };
  const int64_t in = g.spatial.in_count(), windows = g.spatial.out_count();
  const Dims out_dims = g.spatial.out_dims();
  bool tied = false;
  for (int64_t w = 0; w < windows; ++w) {
    const std::vector<int64_t> taps = rules::window_taps(g.spatial, unravel(w, out_dims));
    for (int64_t plane = 0; plane < g.batch * g.channels; ++plane) {
      const double* xp = x.data.data() + plane * in;
      double m = -INFINITY;
      bool nan = false;
      for (int64_t t : taps) {
        nan = nan || std::isnan(xp[t]);
        m = std::max(m, xp[t]);
      }
      if (nan || m == -INFINITY) continue;
      int64_t held = -1;  // the first holder of the maximum, as a flat index into x
      for (int64_t t : taps) {
        if (xp[t] != m) continue;
        const int64_t i = plane * in + t;
        if (held < 0) {
          held = root(i);
          continue;
        }
        const int64_t r = root(i);
        if (r == held) continue;
        tied = true;
        up(std::max(r, held)) = std::min(r, held);
        held = std::min(r, held);
      }
    }
  }
  if (!tied) return {};
  for (int64_t i = 0; i < x.size(); ++i) up(i) = root(i);
  return first;
}

std::vector<std::vector<int64_t>> probe_units(const Problem& p, int t, int64_t size) {
  std::vector<std::vector<int64_t>> units;
  if (t != 0 || p.tie_group.empty()) {
    units.reserve(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) units.push_back({i});
    return units;
  }
  std::vector<int64_t> unit_of(static_cast<size_t>(size), -1);  // a group's unit, at its first element
  for (int64_t i = 0; i < size; ++i) {
    const auto r = static_cast<size_t>(p.tie_group[static_cast<size_t>(i)]);
    if (unit_of[r] < 0) {  // r <= i: the group's first element comes first
      unit_of[r] = static_cast<int64_t>(units.size());
      units.emplace_back();
    }
    units[static_cast<size_t>(unit_of[r])].push_back(i);
  }
  return units;
}

Problem make_problem(const CheckContext& ctx) {
  Problem p{ctx, {}, -1, {}, {}, 0, {}, {}};
  if (op_traits(ctx.c).relu) p.z0 = ref::conv_forward(*conv_geo(ctx), ctx.in.x, ctx.in.w, &ctx.in.b);
  if (const PoolGeometry* g = pool_geo(ctx)) p.tie_group = tie_groups(*g, ctx.in.x);
  return p;
}

}  // namespace kc::checks::fd
