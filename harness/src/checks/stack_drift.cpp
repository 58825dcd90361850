// drift (op: stack, f16 and bf16): the error of every layer's output against the
// oracle's f64 run, judged by two models carried through the layers from the same
// rounded x (both start at zero error).
//
// 1. A worst-case bound B, per element (sound: a correct kernel never exceeds it):
//      conv:  B'  = |W| * B[l-1]                                     (propagated)
//                 + c*gamma(n, u_acc) * A + u_out * A + c*(n*eta_acc + eta_out)   (local)
//             with A = |W| * (|a[l-1]| + B[l-1]) + |b| >= sum |a_i w_i| of the candidate;
//      relu:  1-Lipschitz, B unchanged;   max pool: B = max of B' over the window.
//    It grows like (sum |w|)^depth, far faster than real errors: past a few layers it
//    can no longer fail.
// 2. A rounding-noise model V, the variance of each element's error when every rounding
//    is an independent error of zero mean (the first-order model of Higham section 2.8;
//    a rounding to a unit roundoff u errs by at most u|v|, variance at most u^2 v^2 / 3):
//      conv:  V'  = W^2 * V[l-1]                                     (propagated)
//                 + u_acc^2/3 * (n+1)/2 * (W^2 * a^2 + b^2)          (f32 sums of n terms)
//                 + u_out^2/3 * z^2 + (n*eta_acc^2 + eta_out^2)/3    (z rounded to storage)
//      relu:  V' kept where z > -3 sqrt(V') (where the candidate's z can be positive),
//             0 elsewhere;   max pool: the largest V' of the window;
//    with W^2, a^2, b^2 elementwise squares and z, a the oracle's values. Rounding that
//    is biased (round toward zero, a truncating f32 -> bf16 conversion) or coarser than
//    the dtype (storage in bf16 when f16 is asked) makes the error add up coherently
//    across layers, which the noise model does not allow: FAILED when the layer's rms
//    error exceeds noise_limit() times the model's rms, on the layers where the model's
//    independence holds (zero padding, 16 or more terms per sum: unjudged_because()).
// The message gives, at a few depths, the worst error, its ratio to the bound and the
// rms error over the model's rms.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "check_list.h"
#include "common.h"
#include "kc/dtype.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "kc/tolerance.h"

namespace kc::checks {
namespace {

// A correct kernel's rms error stays near or under the model's (which takes the
// largest variance of each rounding): on 10,000 generated f16/bf16 stacks (kcheck fuzz
// --op stack) the judged ratios have median 0.72, 99.9th percentile 1.3 and maximum
// 1.43; 0.55 to 1.1 on hand-made stacks of depth 1 to 40. The model is an expectation: over the elements, whose squares
// the rms averages, and over the weights, which make the cross terms of correlated
// errors cancel only on average. Where either is few (a relu stack whose activations
// die out, one channel and a few taps) the rms scatters more, hence the allowance for
// m, the lesser of the effective number of elements, (sum V)^2 / sum V^2, and the
// layer's number of weights. Round toward zero reaches 2.2 to 8 at depth 10 and keeps
// growing with depth; f16 sums (not f32) 1.6 to 3.7.
constexpr double kNoiseLimit = 1.5;
// The model treats the errors of different elements as independent. Past a layer (after
// the first, whose input carries no error) that breaks this, the rms is reported but no
// longer judged (the worst-case bound still is):
//  - a layer summing fewer than kMinFanIn terms (one channel and a small kernel): the
//    cross terms of correlated errors cancel only on average over many weights;
//  - replicate, reflect or circular padding: a window holds copies of one element, and
//    on inputs narrower than the padding whole windows are copies of one another, so
//    that equal errors add as one.
constexpr int64_t kMinFanIn = 16;

// Why layer l (0-based, past the first) ends the judged layers, or empty.
std::string unjudged_because(const StackLayer& L) {
  if (L.conv.mode != PaddingMode::kZeros) {
    return std::string(padding_mode_name(L.conv.mode)) + " padding copies elements into several taps";
  }
  if (L.conv.reduction_length() < kMinFanIn) {
    return "it sums " + std::to_string(L.conv.reduction_length()) + " terms, fewer than " + std::to_string(kMinFanIn);
  }
  return {};
}
double noise_limit(double m) { return kNoiseLimit + 4.0 * std::sqrt(2.0 / std::max(m, 1.0)); }

Tensor absolute(Tensor t) {
  for (double& v : t.data) v = std::abs(v);
  return t;
}

Tensor squared(Tensor t) {
  for (double& v : t.data) v *= v;
  return t;
}

// Max pool of a non-negative map over the layer's windows (padding never selected).
Tensor window_max(const StackLayer& L, const Tensor& t) {
  PoolGeometry pg = *L.pool;
  pg.mode = PoolMode::kInference;
  return ref::maxpool_forward(pg, t).y;
}

// The bound on layer l's output from the bound on its input.
Tensor next_bound(const StackLayer& L, const Tensor& a_ref, const Tensor& bound, const Tensor& w, const Tensor& b,
                  DType dtype) {
  ConvGeometry g = L.conv;
  const Tensor aw = absolute(w), ab = absolute(b);
  Tensor mag = absolute(a_ref);
  for (int64_t i = 0; i < mag.size(); ++i) mag[i] += bound[i];
  const Tensor A = ref::conv_forward(g, mag, aw, g.bias ? &ab : nullptr);
  g.bias = false;
  Tensor out = ref::conv_forward(g, bound, aw, nullptr);
  const ToleranceSpec spec{Tolerance{}, dtype, L.conv.reduction_length() + 1};
  for (int64_t i = 0; i < out.size(); ++i) out[i] += element_bound(spec, A[i], A[i]);
  return L.pool ? window_max(L, out) : out;
}

// The noise variance of layer l's output from that of its input (model 2 above).
Tensor next_variance(const StackLayer& L, const Tensor& a_ref, const Tensor& var, const Tensor& w, const Tensor& b,
                     DType dtype) {
  ConvGeometry g = L.conv;
  const Tensor w2 = squared(w), b2 = squared(b);
  const Tensor z = ref::conv_forward(g, a_ref, w, g.bias ? &b : nullptr);
  const Tensor terms = ref::conv_forward(g, squared(a_ref), w2, g.bias ? &b2 : nullptr);
  g.bias = false;
  Tensor v = ref::conv_forward(g, var, w2, nullptr);
  const DType acc = default_accumulation(dtype);
  const double u_acc = unit_roundoff(acc), u_out = unit_roundoff(dtype);
  const double n = static_cast<double>(L.conv.reduction_length() + 1);
  const double eta_acc = underflow_unit(acc), eta_out = underflow_unit(dtype);
  const double underflow = (n * eta_acc * eta_acc + eta_out * eta_out) / 3.0;
  for (int64_t i = 0; i < v.size(); ++i) {
    v[i] += u_acc * u_acc / 3.0 * (n + 1.0) / 2.0 * terms[i] + u_out * u_out / 3.0 * z[i] * z[i] + underflow;
    if (L.relu && z[i] <= -3.0 * std::sqrt(v[i])) v[i] = 0.0;
  }
  return L.pool ? window_max(L, v) : v;
}

}  // namespace

std::string drift_not_applicable(const CheckContext& ctx) {
  if (ctx.stack == nullptr) return "applies to op: stack only";
  if (ctx.c.dtype != DType::kF16 && ctx.c.dtype != DType::kBF16) return "applies to f16 and bf16 stacks";
  return {};
}

CheckResult drift_run(const CheckContext& ctx) {
  const StackContext& s = *ctx.stack;
  if (!s.cand.status.ok()) return call_failed("drift", "the stack", s.cand.status);
  CheckResult r = make_result("drift", Disposition::kPassed);
  Tensor bound = Tensor::zeros(DType::kF64, s.in.x.shape);
  Tensor var = bound;
  const size_t depth = s.layers.size();
  std::string table, over_bound, over_noise;
  size_t judged_to = depth;  // layers [0, judged_to) have their rms judged
  std::string unjudged;
  double worst_noise = 0.0;
  for (size_t l = 0; l < depth; ++l) {
    const Tensor& a_prev = l == 0 ? s.in.x : s.ref.activations[l - 1];
    bound = next_bound(s.layers[l], a_prev, bound, s.in.w[l], s.in.b[l], ctx.c.dtype);
    var = next_variance(s.layers[l], a_prev, var, s.in.w[l], s.in.b[l], ctx.c.dtype);
    const Tensor& cand = s.cand.activations[l];
    const Tensor& ref = s.ref.activations[l];
    double worst = 0.0, ratio = 0.0, err2 = 0.0, var_sum = 0.0, var_sq = 0.0;
    int64_t over = 0;
    for (int64_t i = 0; i < ref.size(); ++i) {
      const double e = std::abs(cand[i] - ref[i]);
      const double q = bound[i] > 0.0 ? e / bound[i] : (e == 0.0 ? 0.0 : INFINITY);
      if (!(e <= bound[i])) ++over;
      worst = std::max(worst, e);
      ratio = std::max(ratio, std::isnan(q) ? INFINITY : q);
      err2 += e * e;
      var_sum += var[i];
      var_sq += var[i] * var[i];
    }
    const double noise = var_sum > 0.0 ? std::sqrt(err2 / var_sum) : (err2 == 0.0 ? 0.0 : INFINITY);
    r.max_error_ratio = std::max(r.max_error_ratio, ratio);
    r.max_abs_error = std::max(r.max_abs_error, worst);
    if (judged_to == depth && l > 0) {
      if (std::string why = unjudged_because(s.layers[l]); !why.empty()) judged_to = l, unjudged = why;
    }
    const bool judged = l < judged_to;
    if (judged) worst_noise = std::max(worst_noise, std::isnan(noise) ? INFINITY : noise);
    const std::string layer = "layer " + std::to_string(l + 1) + ": ";
    if (over_bound.empty() && over > 0) {
      over_bound = layer + std::to_string(over) + " elements over the worst-case bound carried through the layers; ";
    }
    const double weights = static_cast<double>(s.in.w[l].size());
    if (const double limit = noise_limit(std::min(weights, var_sq > 0.0 ? var_sum * var_sum / var_sq : 0.0));
        judged && over_noise.empty() && !(noise <= limit)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "%srms error %.3g times the rounding-noise model's (limit %.3g): the error grows faster than "
                    "round-to-nearest in the dtype allows (biased rounding or a coarser dtype); ",
                    layer.c_str(), noise, limit);
      over_noise = buf;
    }
    if (l == 0 || l + 1 == depth || (l + 1) % std::max<size_t>(1, depth / 4) == 0) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%sdepth %zu: max |err| %.3g (%.3g of bound), rms/model %.3g",
                    table.empty() ? "" : ", ", l + 1, worst, ratio, noise);
      table += buf;
    }
  }
  if (!over_bound.empty() || !over_noise.empty()) r.disposition = Disposition::kFailed;
  r.message = over_bound + over_noise + "error against f64 per depth: " + table;
  char buf[64];
  std::snprintf(buf, sizeof buf, "; largest rms/model %.3g", worst_noise);
  r.message += buf;
  if (judged_to < depth) {
    r.message += " (rms judged up to layer " + std::to_string(judged_to) + ": in layer " +
                 std::to_string(judged_to + 1) + " " + unjudged + ")";
  }
  return r;
}

}  // namespace kc::checks
