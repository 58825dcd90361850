// Ambiguous relu derivatives of conv_bias_relu: see relu_ambiguity.h.
#include "relu_ambiguity.h"

#include <cmath>

#include "kc/tolerance.h"

namespace kc::checks {

ReluAmbiguity relu_ambiguity(const CheckContext& ctx, const ConvGeometry& g) {
  ReluAmbiguity a;
  a.z = ref::conv_forward(g, ctx.in.x, ctx.in.w, &ctx.in.b);
  a.ambiguous.assign(static_cast<size_t>(a.z.size()), false);
  const ToleranceSpec spec = tolerance_for(ctx, "y");
  for (int64_t i = 0; i < a.z.size(); ++i) {
    // An exact 0 is not ambiguous: relu'(0) = 0 is the contract, and a sum that is
    // exactly 0 in f64 here is one a kernel gets exactly too unless its terms cancel
    // inexactly, which shows as a small nonzero z.
    const double z = a.z[i];
    if (z != 0.0 && std::abs(z) < element_bound(spec, z, ctx.abs.y[i])) {
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
  Tensor ax = ctx.in.x, aw = ctx.in.w;
  for (double& v : ax.data) v = std::abs(v);
  for (double& v : aw.data) v = std::abs(v);
  ref::ConvGrads s = ref::conv_backward(g, ax, aw, dy);
  s.db = ref::conv_backward_bias(g, dy);
  return s;
}

}  // namespace kc::checks
