// Ambiguous relu derivatives of conv_bias_relu: see relu_ambiguity.h.
#include "relu_ambiguity.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

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
