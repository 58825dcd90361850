// Ambiguous relu derivatives of conv_bias_relu: see relu_ambiguity.h.
#include "relu_ambiguity.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "kc/tolerance.h"

namespace kc::checks {

namespace {

// log2 of the largest power of two every nonzero finite element of t is a whole multiple
// of: per element, its exponent less the trailing zeros of its 53-bit significand (1.0
// gives 0, 0.75 gives -2, 2^-131 gives -131). INT_MAX when t holds no such element.
int quantum_log2(const Tensor& t) {
  int q = std::numeric_limits<int>::max();
  for (double v : t.data) {
    if (v == 0.0 || !std::isfinite(v)) continue;
    int e = 0;
    const double m = std::frexp(std::abs(v), &e);  // v = m 2^e, m in [0.5, 1)
    const auto significand = static_cast<uint64_t>(std::ldexp(m, 53));
    q = std::min(q, e - 53 + std::countr_zero(significand));
  }
  return q;
}

// Whether the candidate's sums are exact, so that its pre-activation is 0 exactly where
// the oracle's is: every term w*x and b is a multiple of one quantum Q, and every sum stays
// below 2^p Q for the p-bit accumulation, so no partial sum rounds in either. Integer data
// passes; tiny terms beside large ones (subnormal x next to 0.2) do not, and a 0 there may
// be a nonzero sum whose smallest terms the additions absorbed.
bool exact_sums(const CheckContext& ctx) {
  const int qx = quantum_log2(ctx.in.x), qw = quantum_log2(ctx.in.w), qb = quantum_log2(ctx.in.b);
  const int big = std::numeric_limits<int>::max();
  const int q = std::min(qx == big || qw == big ? big : qx + qw, qb);
  if (q == big) return true;  // every term is 0
  const int p = -std::ilogb(unit_roundoff(accumulation_of(tolerance_for(ctx, "y"))));  // u = 2^-p
  double most = 0.0;
  for (double v : ctx.abs.y.data) most = std::max(most, v);
  return std::isfinite(most) && most < std::ldexp(1.0, p + q);
}

}  // namespace

ReluAmbiguity relu_ambiguity(const CheckContext& ctx, const ConvGeometry& g) {
  ReluAmbiguity a;
  a.z = ref::conv_forward(g, ctx.in.x, ctx.in.w, &ctx.in.b);
  a.ambiguous.assign(static_cast<size_t>(a.z.size()), false);
  const ToleranceSpec spec = tolerance_for(ctx, "y");
  const bool exact = exact_sums(ctx);
  for (int64_t i = 0; i < a.z.size(); ++i) {
    // A 0 from exact sums is not ambiguous: relu'(0) = 0 is the contract, and a kernel
    // gets that 0 exactly too. A 0 from inexact sums may be a tiny nonzero sum a kernel
    // gets right, or a kernel's rounding may move it off 0 (see exact_sums).
    const double z = a.z[i];
    const bool near = z != 0.0 || (!exact && ctx.abs.y[i] > 0.0);
    if (near && std::abs(z) < element_bound(spec, z, ctx.abs.y[i])) {
      a.ambiguous[static_cast<size_t>(i)] = true;
      ++a.count;
    }
  }
  return a;
}

ref::ConvGrads ambiguity_slack(const CheckContext& ctx, const ConvGeometry& g, const ReluAmbiguity& a) {
  Tensor dy = Tensor::zeros(DType::kF64, a.z.shape);
  for (int64_t i = 0; i < dy.size(); ++i) {
    if (a.ambiguous[static_cast<size_t>(i)]) dy[i] = std::abs(ctx.in.dy[i]);
  }
  ref::ConvGrads s = ref::conv_backward(g, absolute(ctx.in.x), absolute(ctx.in.w), dy);
  s.db = ref::conv_backward_bias(g, dy);
  return s;
}

std::string ambiguity_swamps(const ReluAmbiguity& a, const ref::ConvGrads& slack, const OpOutputs& ref) {
  const std::pair<const Tensor*, const Tensor*> grads[] = {
      {&slack.dx, &ref.dx}, {&slack.dw, &ref.dw}, {&slack.db, &ref.db}};
  int64_t judged = 0, elements = 0;
  for (const auto& [moved, want] : grads) {
    if (moved->size() == 0 || moved->size() != want->size()) continue;
    // An element is judged where the ambiguity may move it by less than half its size.
    int64_t clear = 0;
    for (int64_t i = 0; i < moved->size(); ++i) clear += (*moved)[i] < 0.5 * std::abs((*want)[i]);
    if (4 * clear >= moved->size()) return {};  // a quarter of one gradient is enough to see a wrong mask
    judged += clear;
    elements += moved->size();
  }
  return std::to_string(a.count) + " of " + std::to_string(a.z.size()) +
         " pre-activations are within rounding of 0, where either side of relu' is right; they may move all but " +
         std::to_string(judged) + " of the " + std::to_string(elements) +
         " gradient elements by half their size or more, so the data cannot judge the relu mask at this precision "
         "(use data further from 0, a smaller reduction or a wider accumulation)";
}

}  // namespace kc::checks
