// relu' formed as dy times 0 (see relu_grad_form.h).
#include "relu_grad_form.h"

#include <cmath>

#include "kc/ref/conv.h"

namespace kc::checks {
namespace {

// Elements where the kernel's gradient is NaN and the oracle's is finite: how many, and
// how many of them the alternative gradient makes NaN too.
void tally(const Tensor& cand, const Tensor& oracle, const Tensor& alt, int64_t& nan, int64_t& explained) {
  if (cand.size() != oracle.size() || alt.size() != oracle.size()) return;
  for (int64_t i = 0; i < oracle.size(); ++i) {
    if (!std::isnan(cand[i]) || !std::isfinite(oracle[i])) continue;
    ++nan;
    explained += std::isnan(alt[i]);
  }
}

}  // namespace

std::string relu_grad_times_zero(const CheckContext& ctx, const ConvGeometry& g) {
  const Tensor z = ref::conv_forward(g, ctx.in.x, ctx.in.w, g.bias ? &ctx.in.b : nullptr);
  const Tensor& dy = ctx.in.dy;
  if (z.size() != dy.size()) return {};
  bool meets = false;
  Tensor dz = dy;
  const bool nan_passes = !ctx.is_reference && ctx.backend.numerics().relu_nan_grad == ReluNanGrad::kPassDy;
  for (int64_t o = 0; o < z.size(); ++o) {
    if (z[o] > 0.0 || (std::isnan(z[o]) && nan_passes)) continue;  // dy passes
    meets = meets || (z[o] < 0.0 && std::isinf(dy[o]));
    dz[o] = dy[o] * 0.0;  // NaN for an infinite dy
  }
  if (!meets) return {};
  const ref::ConvGrads alt = ref::conv_backward(g, ctx.in.x, ctx.in.w, dz);
  int64_t nan = 0, explained = 0;
  tally(ctx.cand.dx, ctx.ref.dx, alt.dx, nan, explained);
  tally(ctx.cand.dw, ctx.ref.dw, alt.dw, nan, explained);
  tally(ctx.cand.db, ctx.ref.db, alt.db, nan, explained);
  if (nan == 0 || explained != nan) return {};
  return "NaN at " + std::to_string(nan) +
         " gradient elements, each where an infinite dy meets a negative pre-activation: relu' applied as dy x 0 "
         "(0 x inf is NaN; the contract gives 0); ";
}

}  // namespace kc::checks
