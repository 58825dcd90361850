// argmax: the max-pool rules of docs/ops.md ("Max pooling"), checked on the backend's own
// outputs (not against the oracle's, so that the oracle can check itself with it): every
// index is written, lies in its window and points to the element y was taken from; y is the
// window maximum, and a window holding a NaN gives NaN; ties follow the case's rule; dx is
// dy routed through the backend's own indices, nothing elsewhere; an inference-mode forward
// gives bitwise the training y, and a backward without indices is refused.
// More on the method: docs/notes.md, section harness/src/checks/argmax.cpp.
#include <cmath>
#include <limits>
#include <optional>

#include "backend/candidate_call.h"
#include "check_list.h"
#include "common.h"
#include "findings.h"
#include "window.h"

namespace kc::checks {

// The rule checks' shared helpers live in their own namespace: inline functions of
// another checks header may share a name (and must not share a definition).
using namespace rules;
namespace {

// The backend's outputs in one mode: the runner's when the mode is the case's own,
// else a run on a copy of the case in that mode.
struct ModeRun {
  PoolGeometry g;
  std::optional<OpOutputs> own;
  const OpOutputs* shared = nullptr;
  const OpOutputs& out() const { return own ? *own : *shared; }
};

ModeRun run_in_mode(const CheckContext& ctx, PoolMode mode, Pass pass) {
  ModeRun r;
  r.g = *pool_geo(ctx);
  if (r.g.mode == mode) {
    r.shared = &ctx.cand;
    return r;
  }
  r.g.mode = mode;  // the geometry does not depend on the mode; invoke reads it
  Case c = ctx.c;
  std::get<MaxPoolParams>(c.op).mode = mode;
  r.own = invoke(ctx.backend, c, OpGeometry{r.g}, ctx.in, pass);
  return r;
}

// One training-mode forward, viewed per window.
struct PoolView {
  const PoolGeometry& g;
  const Tensor& x;
  const Tensor& y;
  const IndexTensor& idx;
  int64_t in_count = g.spatial.in_count();
  int64_t out_count = g.spatial.out_count();
  std::string window(int64_t w) const { return "window " + at(w, g.y_shape()); }
  std::string input(int64_t i) const { return "input " + at(i, g.spatial.in_dims()); }
  const double* plane(int64_t w) const { return x.data.data() + (w / out_count) * in_count; }
};

bool all_minus_inf(const double* plane, const std::vector<int64_t>& taps) {
  for (int64_t t : taps) {
    if (!(plane[t] == -std::numeric_limits<double>::infinity())) return false;
  }
  return true;
}

// Whether the index of window w can be used: written, inside the plane, in the window.
bool index_usable(const PoolView& v, int64_t w, const std::vector<int64_t>& out, const std::vector<int64_t>& taps,
                  Findings& f) {
  const int64_t i = v.idx.data[static_cast<size_t>(w)];
  const int64_t p = w / v.out_count;
  if (i == kPoisonIndex) {
    f.add("unwritten", "the index of " + v.window(w) + " was never written (still the poison value)");
    return false;
  }
  if (i < 0 || i >= v.in_count) {
    const int64_t local = i - p * v.in_count;
    if (p > 0 && local >= 0 && local < v.in_count && std::find(taps.begin(), taps.end(), local) != taps.end()) {
      f.add("batch", "index " + num(i) + " of " + v.window(w) + " includes the offset " + num(p * v.in_count) +
                         " of its (n, c) plane: indices are positions in the plane, not in the whole tensor "
                         "(expected " +
                         num(local) + ")");
    } else {
      std::string d =
          "index " + num(i) + " of " + v.window(w) + " is outside its (n, c) plane [0, " + num(v.in_count) + ")";
      if (all_minus_inf(v.plane(w), taps))
        d += ": a window of only -inf must point to one of its elements inside the input (by the tie rule)";
      f.add("plane", d);
    }
    return false;
  }
  const std::vector<int64_t> ic = unravel(i, v.g.spatial.in_dims());
  for (size_t a = 0; a < ic.size(); ++a) {
    if (in_window(v.g.spatial.dims[a], out[a], ic[a])) continue;
    f.add("window", "index " + num(i) + " of " + v.window(w) + " points to " + v.input(i) + ", outside the window");
    return false;
  }
  return true;
}

// The window's maximum: NaN when it holds one (nan_at: the first NaN), else the largest.
struct WindowMax {
  double value = -std::numeric_limits<double>::infinity();
  int64_t nan_at = -1;
  bool nan() const { return nan_at >= 0; }
  bool held_by(double v) const { return nan() ? std::isnan(v) : v == value; }
};

WindowMax window_max(const double* plane, const std::vector<int64_t>& taps) {
  WindowMax m;
  for (int64_t t : taps) {
    if (std::isnan(plane[t]))
      m.nan_at = m.nan_at < 0 ? t : m.nan_at;
    else
      m.value = std::max(m.value, plane[t]);
  }
  return m;
}

// Whether y is the most negative finite value of the dtype (one step further overflows).
bool lowest_finite(DType dtype, double y) {
  return std::isfinite(y) && y < 0.0 && std::isinf(round_to(dtype, y * (1.0 + 2.0 * unit_roundoff(dtype))));
}

// A backend that declares FTZ may give 0 for a subnormal maximum.
struct YRules {
  DType dtype;
  bool flushes = false;
};

// y is the window maximum, NaN when the window holds one; needs no index. The kernels
// that break these rules compare with a strict `>` from a running maximum: NaN never
// wins, and a running maximum that starts at the lowest finite value survives a window
// of only -inf.
void check_y(const PoolView& v, const YRules& rules, int64_t w, const WindowMax& m, Findings& f) {
  const double y = v.y[w];
  const bool flushed = rules.flushes && y == 0.0 && std::isfinite(m.value) &&
                       std::abs(m.value) < std::ldexp(1.0, min_normal_exponent(rules.dtype));
  if (m.nan() && !std::isnan(y)) {
    // Whatever y is, the kernel did not select the NaN; say what it took instead.
    const std::string took = y == m.value ? ", its largest other element"
                             : lowest_finite(rules.dtype, y)
                                 ? ", the lowest finite value (where its running maximum starts)"
                                 : "";
    f.add("nan", "NaN rule: max pool never selects NaN: " + v.window(w) + " holds a NaN at " + v.input(m.nan_at) +
                     " but y is " + num(y) + took + " (a strict > never takes NaN); a window with a NaN must give NaN");
  } else if (!m.nan() && m.value == -std::numeric_limits<double>::infinity() && lowest_finite(rules.dtype, y)) {
    f.add("lowest", "window of only -inf gives the lowest finite value: y of " + v.window(w) + " is " + num(y) +
                        " but every element of the window is -inf (a running maximum that starts at the lowest "
                        "finite value, not at -inf)");
  } else if (!m.nan() && !(y == m.value) && !flushed) {
    f.add("max", "y of " + v.window(w) + " is " + num(y) + " but the window maximum is " + num(m.value));
  }
}

// The index points to the element y was taken from, and the tie rule holds.
void check_value_and_tie(const PoolView& v, int64_t w, const std::vector<int64_t>& taps, const WindowMax& m,
                         Findings& f) {
  const double* plane = v.plane(w);
  const int64_t i = v.idx.data[static_cast<size_t>(w)];
  const double y = v.y[w], xi = plane[i];
  if (!m.held_by(y)) return;  // check_y reported it; the index has no right answer to point to
  if (!m.held_by(xi)) {
    f.add("value", "index " + num(i) + " of " + v.window(w) + " points to x = " + num(xi) + " at " + v.input(i) +
                       " but y is " + num(y) + ": it must point to the element y was taken from");
    return;
  }
  // A window of only -inf is no exception: its maximum, -inf, is held by every element.
  if (v.g.tie == TieRule::kAny) return;
  int64_t rank = 0, holders = 0, first = -1, last = -1;
  for (int64_t t : taps) {
    if (!m.held_by(plane[t])) continue;
    ++holders;
    first = first < 0 ? t : first;
    last = t;
    if (t == i) rank = holders;
  }
  const bool want_first = v.g.tie == TieRule::kFirst;
  const int64_t want = want_first ? first : last;
  if (i == want) return;
  // PyTorch's CPU max pool replaces its running maximum on `x > max || isnan(x)`: every
  // NaN wins, so the last one is kept whatever the tie rule says.
  const std::string last_nan = m.nan() && want_first && i == last
                                   ? ": max pool keeps the last NaN (a running maximum that every NaN replaces)"
                                   : "";
  f.add("tie", "tie rule " + std::string(tie_rule_name(v.g.tie)) + ": the index of " + v.window(w) + " points to the " +
                   ordinal(rank) + " of " + num(holders) +
                   (m.nan()                              ? " NaNs"
                    : std::isinf(m.value) && m.value < 0 ? " elements, all -inf,"
                                                         : " maxima") +
                   " of the window (" + v.input(i) + "), the " + (want_first ? "first" : "last") + " is at " +
                   v.input(want) + last_nan);
}

// Every window's index; returns whether all of them are usable for routing dy.
bool check_indices(const CheckContext& ctx, const ModeRun& train, Findings& f) {
  const OpOutputs& t = train.out();
  const PoolView v{train.g, ctx.in.x, t.y, *t.indices};
  const int64_t windows = element_count(train.g.y_shape());
  if (t.indices->shape != train.g.y_shape() || t.indices->size() != windows || t.y.size() != windows) {
    f.add("shape", "indices have shape " + dims_to_string(t.indices->shape) + " (" + num(t.indices->size()) +
                       " elements), the contract says " + dims_to_string(train.g.y_shape()));
    return false;
  }
  bool usable = true;
  const Dims out_dims = train.g.spatial.out_dims();
  const YRules rules{ctx.c.dtype, !ctx.is_reference && ctx.backend.numerics().flushes_subnormals};
  for (int64_t w = 0; w < windows; ++w) {
    const std::vector<int64_t> out = unravel(w % v.out_count, out_dims);
    const std::vector<int64_t> taps = window_taps(train.g.spatial, out);
    const WindowMax m = window_max(v.plane(w), taps);
    check_y(v, rules, w, m, f);
    if (!index_usable(v, w, out, taps, f)) {
      usable = false;
      continue;
    }
    check_value_and_tie(v, w, taps, m, f);
  }
  return usable;
}

// sum(dx) == sum(dy) per (n, c) plane: needs no index, so it also catches a backward
// that drops the gradient whatever its indices say.
void check_plane_sums(const PoolGeometry& g, const Tensor& dy, const Tensor& dx, const ToleranceSpec& spec,
                      Findings& f) {
  const int64_t in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  for (int64_t p = 0; p < g.batch * g.channels; ++p) {
    double sdx = 0.0, sdy = 0.0, sabs = 0.0;
    for (int64_t i = 0; i < in_count; ++i) sdx += dx[p * in_count + i];
    for (int64_t o = 0; o < out_count; ++o) {
      sdy += dy[p * out_count + o];
      sabs += std::abs(dy[p * out_count + o]);
    }
    if (!std::isfinite(sdy)) continue;  // an infinite or NaN dy has no finite sum to conserve
    // An element of dx may rightly overflow the case dtype when the plane's |dy| does.
    if (std::isinf(sdx) && std::isinf(round_to(spec.storage, sabs))) continue;
    double bound = element_bound(spec, sabs, sabs);
    if (spec.tolerance.kind == ToleranceKind::kExplicit)
      bound += spec.tolerance.atol * static_cast<double>(in_count - 1);
    // The two sums above are ours, in f64 and in different orders (dx holds sums of dy):
    // their rounding is allowed even under `exact`, which is exact for integer data only.
    bound += gamma_n(in_count + out_count, unit_roundoff(DType::kF64)) * sabs;
    if (within(sdx, sdy, bound)) continue;
    f.add("sum", "plane (n, c) = " + tuple(unravel(p, {g.batch, g.channels})) + ": sum(dx) = " + num(sdx) +
                     " but sum(dy) = " + num(sdy) + ": gradient is lost or duplicated");
  }
}

// Bad sums at inputs several windows point to that equal one window's dy. Overwriting
// windows leave no such input adding up; a skipped window (or another partial loss)
// leaves others that do: only the first is named an overwrite.
template <typename Target>
void name_single_shares(const PoolGeometry& g, const Tensor& dy, const Tensor& want, const std::vector<int64_t>& hits,
                        Target target, const Tensor& dx, const ToleranceSpec& spec, std::vector<char>& bad,
                        Findings& f) {
  std::vector<int64_t> share(hits.size(), -1);
  std::vector<char> like_one(hits.size(), 0);  // the right sum is within the tolerance of one dy
  for (int64_t w = 0; w < dy.size(); ++w) {
    const int64_t i = target(w);
    const double bound = element_bound(spec, dy[w], std::abs(dy[w]));
    like_one[static_cast<size_t>(i)] |= within(want[i], dy[w], bound);
    if (bad[static_cast<size_t>(i)] && within(dx[i], dy[w], bound)) share[static_cast<size_t>(i)] = w;
  }
  int64_t added_up = 0;  // inputs of several windows whose right sum is no one dy, summed right
  for (size_t i = 0; i < hits.size(); ++i) added_up += hits[i] > 1 && !like_one[i] && !bad[i];
  for (size_t i = 0; i < hits.size(); ++i) {
    if (share[i] < 0) continue;
    const std::string where = "dx at input " + at(static_cast<int64_t>(i), g.x_shape()) + " is " + num(dx[i]) +
                              ", the dy of one window, but " + num(hits[i]) +
                              " windows point there and their dy sum to " + num(want[i]);
    if (added_up == 0)
      f.add("overwrite", "overlapping windows overwrite instead of adding: " + where);
    else
      f.add("one-share",
            where + " (yet " + num(added_up) + " other inputs of several windows add up: not an overwrite everywhere)");
    bad[i] = 0;
  }
}

// dx against dy scattered through the backend's own indices; names stray gradient and
// overlapping windows that overwrite instead of adding.
void check_scatter(const ModeRun& train, const Tensor& dy, const ToleranceSpec& spec, Findings& f, CheckResult& r) {
  const PoolGeometry& g = train.g;
  const OpOutputs& t = train.out();
  const int64_t in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  Tensor want = Tensor::zeros(DType::kF64, g.x_shape()), abs = want;
  std::vector<int64_t> hits(static_cast<size_t>(want.size()), 0);
  auto target = [&](int64_t w) { return (w / out_count) * in_count + t.indices->data[static_cast<size_t>(w)]; };
  for (int64_t w = 0; w < dy.size(); ++w) {
    want[target(w)] += dy[w];
    abs[target(w)] += std::abs(dy[w]);
    ++hits[static_cast<size_t>(target(w))];
  }
  // A 16-bit accumulator, rounding after every add, loses small dy beside a large one
  // (which could pass for an overwrite); only a 16-bit storage dtype tells it from a sum.
  const bool narrow_storage = spec.storage == DType::kF16 || spec.storage == DType::kBF16;
  std::vector<char> bad(hits.size(), 0);
  int64_t bad_sums = 0, narrow_sums = 0, first_narrow = -1;
  for (int64_t i = 0; i < want.size(); ++i) {
    if (within(t.dx[i], want[i], element_bound(spec, want[i], abs[i]))) continue;
    if (overflow_explains(spec, t.dx[i], want[i], abs[i])) continue;  // the sum overflows the dtype
    const int64_t n = hits[static_cast<size_t>(i)];
    const std::string where = "dx at input " + at(i, g.x_shape()) + " is " + num(t.dx[i]);
    if (n == 0) f.add("stray", where + " but no index points there: gradient must land only on indexed positions");
    if (n == 1) f.add("routed", where + " but the dy of the one window whose index points there is " + num(want[i]));
    bad[static_cast<size_t>(i)] = n > 1;
    if (n > 1) {
      ++bad_sums;
      // In any order of the windows, n - 1 adds rounded to the storage dtype lose at most
      // gamma(n - 1) of the dy's magnitudes (and an underflow unit each) plus the final rounding.
      const double u = narrow_storage ? unit_roundoff(spec.storage) : 0.0;
      const double lost = gamma_n(n - 1, u) * abs[i] + u * std::abs(want[i]) +
                          static_cast<double>(n - 1) * (narrow_storage ? underflow_unit(spec.storage) : 0.0);
      const bool narrow_sum = narrow_storage && std::abs(t.dx[i] - want[i]) <= lost;
      if (narrow_sum && narrow_sums++ == 0) first_narrow = i;
    }
  }
  if (narrow_storage && bad_sums > 0 && narrow_sums == bad_sums) {  // every bad sum is a 16-bit one
    f.add("narrow", "dx summed in " + std::string(dtype_name(spec.storage)) +
                        ", rounding after every add (in some order of the windows): dx at input " +
                        at(first_narrow, g.x_shape()) + " is " + num(t.dx[first_narrow]) + " where the " +
                        num(hits[static_cast<size_t>(first_narrow)]) + " windows pointing there sum to " +
                        num(want[first_narrow]) + " (" + num(bad_sums) +
                        " such elements); accumulate in f32 and round once");
    std::fill(bad.begin(), bad.end(), 0);
  }
  name_single_shares(g, dy, want, hits, target, t.dx, spec, bad, f);
  for (int64_t i = 0; i < want.size(); ++i) {
    if (!bad[static_cast<size_t>(i)]) continue;
    f.add("routed", "dx at input " + at(i, g.x_shape()) + " is " + num(t.dx[i]) + " but the " +
                        num(hits[static_cast<size_t>(i)]) + " windows whose index points there sum to " + num(want[i]));
  }
  CheckResult cmp;  // for the worst coordinates and the error ratio of the report
  compare_tensors("dx", t.dx, want, &abs, spec, cmp);
  r.max_error_ratio = cmp.max_error_ratio;
  r.max_abs_error = cmp.max_abs_error;
  if (cmp.disposition == Disposition::kFailed) r.worst = cmp.worst;  // not a pass's closest point
}

// Inference y equals training y bitwise; a backward without indices is refused.
void check_modes(const CheckContext& ctx, const ModeRun& train, Findings& f, std::string& notes) {
  const ModeRun inf = run_in_mode(ctx, PoolMode::kInference, Pass::kForward);
  const OpOutputs& i = inf.out();
  if (!i.forward.ok() && unsupported(i.forward)) {
    notes += "inference mode not supported (" + i.forward.message() + "); ";
  } else if (!i.forward.ok()) {
    f.add("inference", "the inference-mode forward returned " + i.forward.to_string());
  } else if (train.out().forward.ok()) {
    const Tensor& ty = train.out().y;
    const BitDiff d = bit_diff(i.y.data, ty.data);
    if (d.count > 0 || i.y.shape != ty.shape) {
      std::string first;
      if (d.first >= 0 && d.first < std::min(i.y.size(), ty.size())) {
        first = ", first at " + at(d.first, inf.g.y_shape()) + ": " + num_exact(i.y[d.first]) + " vs " +
                num_exact(ty[d.first]);
      }
      f.add("modes", "inference y differs from training y at " + num(d.count) + " of " + num(ty.size()) + " elements" +
                         first + " (the modes must agree bitwise)");
    }
  }
  Tensor dx = Tensor::filled(ctx.c.dtype, inf.g.x_shape(), std::numeric_limits<double>::quiet_NaN());
  const Status s = candidate_call(ctx.backend, "maxpool_backward",
                                  [&] { return ctx.backend.maxpool_backward(inf.g, ctx.in.dy, nullptr, dx); });
  if (s.ok()) {
    f.add("refusal",
          "backward without indices was not refused: it would silently give zero gradients "
          "(return failed_precondition when indices is null)");
  } else if (s.code() != StatusCode::kFailedPrecondition) {
    notes += "backward without indices refused with " + std::string(status_code_name(s.code())) +
             " (failed_precondition is the expected code); ";
  }
}

// The index rules and the gradient routing on a training-mode run.
void check_training(const CheckContext& ctx, const ModeRun& train, Findings& f, std::string& notes, CheckResult& r) {
  const OpOutputs& t = train.out();
  if (!t.forward.ok()) {
    if (unsupported(t.forward))
      notes += "training mode not supported, index rules not checked; ";
    else
      f.add("training", "the training-mode forward returned " + t.forward.to_string());
    return;
  }
  if (!t.indices) {
    f.add("indices", "training mode but the backend returned no indices");
    return;
  }
  const bool usable = check_indices(ctx, train, f);
  if (!t.ran_backward || !t.backward.ok()) {
    if (unsupported(t.backward))
      notes += "backward not supported, gradient routing not checked; ";
    else
      f.add("backward", "the training-mode backward returned " + t.backward.to_string());
    return;
  }
  if (t.dx.size() != ctx.in.x.size()) {
    f.add("dx", "dx has " + num(t.dx.size()) + " elements, the contract says " + num(ctx.in.x.size()));
    return;
  }
  const ToleranceSpec spec = tolerance_for(ctx, "dx");
  check_plane_sums(train.g, ctx.in.dy, t.dx, spec, f);
  if (usable)
    check_scatter(train, ctx.in.dy, spec, f, r);
  else
    notes += "dx not compared position by position: the indices are unusable; ";
}

}  // namespace

CheckResult argmax_run(const CheckContext& ctx) {
  CheckResult r = make_result("argmax", Disposition::kPassed);
  Findings f;
  std::string notes;
  const ModeRun train = run_in_mode(ctx, PoolMode::kTraining, Pass::kForwardBackward);
  check_training(ctx, train, f, notes, r);
  check_modes(ctx, train, f, notes);
  if (!f.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = f.summary();
    if (!notes.empty()) r.message += "; " + notes.substr(0, notes.size() - 2);
    return r;
  }
  // Only an all-zero dy hides a routing bug (a backward writing zeros would pass); a
  // constant or sparse dy still shows stray, lost and overwritten gradient.
  if (std::all_of(ctx.in.dy.data.begin(), ctx.in.dy.data.end(), [](double v) { return v == 0.0; })) {
    return make_result("argmax", Disposition::kMistrusted,
                       "dy is all zero: a backward that writes zeros would pass the gradient routing rules");
  }
  r.message = num(element_count(train.g.y_shape())) + " windows: indices in plane and window, tie " +
              std::string(tie_rule_name(train.g.tie)) + " and NaN rules hold; dx routes dy through the indices " +
              "(overlaps add, plane sums match); inference y equals training y; backward without indices refused";
  if (!notes.empty()) r.message += "; " + notes.substr(0, notes.size() - 2);
  return r;
}

}  // namespace kc::checks
