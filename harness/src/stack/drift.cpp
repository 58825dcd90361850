// drift (op: stack, f16 and bf16): the error of every layer's output against the
// oracle's f64 run, judged two ways from the same rounded x (both start at zero error).
//
// 1. A worst-case bound B, per element, carried through the layers (sound: a correct
//    kernel never exceeds it). It grows like (sum |w|)^depth, so it is tight for the
//    first layers and can no longer fail past a few.
// 2. A yardstick: the oracle run in the case dtype, every layer rounded to nearest like
//    the candidate's, whose error against f64 is what the storage rounding alone makes.
//    FAILED when the candidate's error over all layers exceeds kYardstick times the
//    yardstick's (plus a floor); on the oracle itself only the bound is judged.
// More on the method: docs/notes.md, section harness/src/stack/drift.cpp.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checks/check_list.h"
#include "checks/common.h"
#include "judge/tolerance.h"
#include "kc/dtype.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"

namespace kc::checks {
namespace {

// Over all layers, a correct kernel with f32 sums (tests/support/f32_accumulation.h)
// measured 0.58 to 1.47 of the yardstick on 2,250 stacks (generated ones of depth up to
// 8, and 750 of depth 16 to 50 with 2 or 3 channels); truncation toward zero 1.9 or
// more on 99% of the deep ones, 4.2 at the median.
constexpr double kYardstick = 2.0;
// Two runs' rounding errors are compared only where at least this many elements (over
// all layers) carry one: the ratio of two sums of m independent squares scatters like
// an F(m, m) variate, past 4 (a ratio of 2) once in about 10^7 at m = 64, but often at
// m of a few; padding that copies elements and narrow layers correlate the errors, so
// that m overstates the independent ones.
constexpr int64_t kMinSamples = 256;

// Max pool of a non-negative map over the layer's windows (padding never selected).
Tensor window_max(const StackLayer& L, const Tensor& t) {
  PoolGeometry pg = *L.pool;
  pg.mode = PoolMode::kInference;
  return ref::maxpool_forward(pg, t).y;
}

// The bound on layer l's output from the bound on its input.
Tensor next_bound(const StackLayer& L, const Tensor& a_ref, const Tensor& bound, const Tensor& w, const Tensor& b,
                  DType dtype, DType accumulation) {
  ConvGeometry g = L.conv;
  const Tensor aw = absolute(w), ab = absolute(b);
  Tensor mag = absolute(a_ref);
  for (int64_t i = 0; i < mag.size(); ++i) mag[i] += bound[i];
  const Tensor A = ref::conv_forward(g, mag, aw, g.bias ? &ab : nullptr);
  g.bias = false;
  Tensor out = ref::conv_forward(g, bound, aw, nullptr);
  const ToleranceSpec spec{Tolerance{}, dtype, L.conv.reduction_length() + 1, accumulation};
  for (int64_t i = 0; i < out.size(); ++i) out[i] += element_bound(spec, A[i], A[i]);
  return L.pool ? window_max(L, out) : out;
}

// One layer's error against f64, and the yardstick's (with `yard`).
struct LayerDrift {
  double worst = 0.0, ratio = 0.0, err2 = 0.0, yard2 = 0.0, ref2 = 0.0;
  int64_t over = 0, samples = 0;  // elements over the bound; elements where the yardstick errs
};

LayerDrift measure_layer(const Tensor& cand, const Tensor& ref, const Tensor* yard, const Tensor& bound) {
  LayerDrift d;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double e = std::abs(cand[i] - ref[i]);
    const double q = bound[i] > 0.0 ? e / bound[i] : (e == 0.0 ? 0.0 : INFINITY);
    if (!(e <= bound[i])) ++d.over;
    d.worst = std::max(d.worst, e);
    d.ratio = std::max(d.ratio, std::isnan(q) ? INFINITY : q);
    d.err2 += e * e;
    d.ref2 += ref[i] * ref[i];
    if (yard != nullptr) {
      const double y = (*yard)[i] - ref[i];
      d.yard2 += y * y;
      d.samples += y != 0.0;
    }
  }
  return d;
}

// The layers so far: sums of squares over all of them, the first layer over the bound,
// and the table of a few depths for the message.
struct DriftTotals {
  double worst_yard = 0.0, err2 = 0.0, yard2 = 0.0, floor2 = 0.0;
  int64_t samples = 0;
  std::string table, over_bound;
};

void add_layer(size_t l, size_t depth, int64_t elements, const LayerDrift& d, DType dtype, bool judged_by_yard,
               DriftTotals& t) {
  const double count = static_cast<double>(std::max<int64_t>(1, elements));
  const double rms = std::sqrt(d.err2 / count), yard_rms = std::sqrt(d.yard2 / count);
  const double floor = 0.1 * unit_roundoff(dtype) * std::sqrt(d.ref2 / count) + underflow_unit(dtype);
  const double to_yard = judged_by_yard ? rms / (yard_rms + floor) : 0.0;
  t.err2 += d.err2;
  t.yard2 += d.yard2;
  t.floor2 += floor * floor * count;
  t.samples += d.samples;
  t.worst_yard = std::max(t.worst_yard, std::isnan(to_yard) ? INFINITY : to_yard);
  if (t.over_bound.empty() && d.over > 0) {
    t.over_bound = "layer " + std::to_string(l + 1) + ": " + std::to_string(d.over) +
                   " elements over the worst-case bound carried through the layers; ";
  }
  if (l == 0 || l + 1 == depth || (l + 1) % std::max<size_t>(1, depth / 4) == 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%sdepth %zu: max |err| %.3g (%.3g of bound), rms %.3g", t.table.empty() ? "" : ", ",
                  l + 1, d.worst, d.ratio, rms);
    t.table += buf;
    if (judged_by_yard) {
      std::snprintf(buf, sizeof buf, " (%.3g of the yardstick's)", to_yard);
      t.table += buf;
    }
  }
}

// The verdict against the yardstick over all layers, into r (candidates only).
void judge_against_yardstick(const DriftTotals& t, DType dtype, CheckResult& r) {
  const double overall = std::sqrt(t.err2) / (std::sqrt(t.yard2) + std::sqrt(t.floor2));
  const bool judged = t.samples >= kMinSamples;
  if (judged && !(overall <= kYardstick)) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "error over all layers %.3g times that of the oracle rounding every layer to nearest in %s (limit "
                  "%.3g times): biased rounding (toward zero) or a coarser dtype; ",
                  overall, std::string(dtype_name(dtype)).c_str(), kYardstick);
    r.message = buf + r.message;
    r.disposition = Disposition::kFailed;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "; over all layers %.3g of the yardstick's (largest at one layer %.3g)", overall,
                t.worst_yard);
  r.message += buf;
  if (!judged) {
    r.message += " (not judged: " + std::to_string(t.samples) + " elements carry a rounding error, fewer than " +
                 std::to_string(kMinSamples) + " to compare two runs' rounding; the bound is)";
  }
}

}  // namespace

CheckResult drift_run(const CheckContext& ctx) {
  const StackContext& s = *ctx.stack;
  if (!s.cand.status.ok()) return call_failed("drift", "the stack", s.cand.status);
  const StackRun& yard = s.lowered;
  if (!yard.status.ok())
    return make_result("drift", Disposition::kFailed, "the oracle in the dtype failed: " + yard.status.to_string());
  CheckResult r = make_result("drift", Disposition::kPassed);
  Tensor bound = Tensor::zeros(DType::kF64, s.in.x.shape);
  DriftTotals totals;
  for (size_t l = 0; l < s.layers.size(); ++l) {
    const Tensor& a_prev = l == 0 ? s.in.x : s.ref.activations[l - 1];
    bound = next_bound(s.layers[l], a_prev, bound, s.in.w[l], s.in.b[l], ctx.c.dtype, accumulation_of(ctx.c));
    const Tensor& ref = s.ref.activations[l];
    const LayerDrift d =
        measure_layer(s.cand.activations[l], ref, ctx.is_reference ? nullptr : &yard.activations[l], bound);
    r.max_error_ratio = std::max(r.max_error_ratio, d.ratio);
    r.max_abs_error = std::max(r.max_abs_error, d.worst);
    add_layer(l, s.layers.size(), ref.size(), d, ctx.c.dtype, !ctx.is_reference, totals);
  }
  if (!totals.over_bound.empty()) r.disposition = Disposition::kFailed;
  r.message = "error against f64 per depth: " + totals.table;
  if (ctx.is_reference) {
    r.message += "; the oracle in " + std::string(dtype_name(ctx.c.dtype)) +
                 " is the yardstick of candidates: only the bound is judged here";
  } else {
    judge_against_yardstick(totals, ctx.c.dtype, r);
  }
  r.message = totals.over_bound + r.message;
  return r;
}

}  // namespace kc::checks
