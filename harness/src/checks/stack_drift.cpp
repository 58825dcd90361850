// drift (op: stack, f16 and bf16): the error of every layer's output against the
// oracle's f64 run, checked per element against a bound model carried through the
// layers. With B[l] the bound on layer l's output (B[0] = 0: both runs start from the
// same rounded x):
//   conv:  B'  = |W| * B[l-1]                                     (propagated)
//              + c*gamma(n, u_acc) * A + u_out * A + c*(n*eta_acc + eta_out)   (local)
//          with A = |W| * (|a[l-1]| + B[l-1]) + |b| >= sum |a_i w_i| of the candidate;
//   relu:  1-Lipschitz, B unchanged;   max pool: B = max of B' over the window.
// The message gives the worst error and its ratio to the bound at a few depths.
#include <cmath>
#include <string>

#include "check_list.h"
#include "common.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "kc/tolerance.h"

namespace kc::checks {
namespace {

Tensor absolute(Tensor t) {
  for (double& v : t.data) v = std::abs(v);
  return t;
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
  if (!L.pool) return out;
  PoolGeometry pg = *L.pool;
  pg.mode = PoolMode::kInference;
  return ref::maxpool_forward(pg, out).y;
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
  const size_t depth = s.layers.size();
  std::string table;
  for (size_t l = 0; l < depth; ++l) {
    const Tensor& a_prev = l == 0 ? s.in.x : s.ref.activations[l - 1];
    bound = next_bound(s.layers[l], a_prev, bound, s.in.w[l], s.in.b[l], ctx.c.dtype);
    const Tensor& cand = s.cand.activations[l];
    const Tensor& ref = s.ref.activations[l];
    double worst = 0.0, ratio = 0.0;
    int64_t over = 0;
    for (int64_t i = 0; i < ref.size(); ++i) {
      const double e = std::abs(cand[i] - ref[i]);
      const double q = bound[i] > 0.0 ? e / bound[i] : (e == 0.0 ? 0.0 : INFINITY);
      if (!(e <= bound[i])) ++over;
      worst = std::max(worst, e);
      ratio = std::max(ratio, std::isnan(q) ? INFINITY : q);
    }
    r.max_error_ratio = std::max(r.max_error_ratio, ratio);
    r.max_abs_error = std::max(r.max_abs_error, worst);
    if (over > 0 && r.disposition == Disposition::kPassed) {
      r.disposition = Disposition::kFailed;
      r.message = "layer " + std::to_string(l + 1) + ": " + std::to_string(over) +
                  " elements over the bound carried through the layers; ";
    }
    if (l == 0 || l + 1 == depth || (l + 1) % std::max<size_t>(1, depth / 4) == 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%sdepth %zu: max |err| %.3g (%.3g of bound)", table.empty() ? "" : ", ", l + 1,
                    worst, ratio);
      table += buf;
    }
  }
  r.message += "error against f64 per depth: " + table;
  return r;
}

}  // namespace kc::checks
