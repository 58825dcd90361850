// absolute_pass(): the oracle on absolute values; absolute_pass_for() spreads it over
// output planes for a backend that declares a transform algorithm; finite_part_pass()
// the same over the finite inputs alone.
#include "judge/absolute_pass.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "judge/transform_bound.h"
#include "kc/overloaded.h"
#include "kc/ref/avgpool.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "ops/op_module.h"

namespace kc {

namespace {

// The fused op's backward sums dz = dy relu'(z): |dy| where z > 0, and where z is NaN
// (relu'(NaN) may pass dy, a convention the checks accept). Elsewhere dy never enters a
// sum, so an infinite dy there bounds nothing. Other ops: |dy| itself.
Tensor relu_masked(const Case& c, const ConvGeometry& g, const OpInputs& in, Tensor ady) {
  if (!op_traits(c).relu || ady.size() == 0) return ady;
  const Tensor z = ref::conv_forward(g, in.x, in.w, g.bias ? &in.b : nullptr);
  for (int64_t i = 0; i < ady.size() && i < z.size(); ++i) {
    if (!(z[i] > 0.0) && !std::isnan(z[i])) ady[i] = 0.0;
  }
  return ady;
}

}  // namespace

OpOutputs absolute_pass(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref) {
  OpOutputs a;
  std::visit(Overloaded{[&](const ConvGeometry& cg) {
                          const Tensor ax = absolute(in.x), aw = absolute(in.w), ab = absolute(in.b),
                                       ady = relu_masked(c, cg, in, absolute(in.dy));
                          a.y = ref::conv_forward(cg, ax, aw, cg.bias ? &ab : nullptr);
                          a.dx = ref::conv_backward_data(cg, ady, aw);
                          a.dw = ref::conv_backward_weight(cg, ax, ady);
                          if (cg.bias) a.db = ref::conv_backward_bias(cg, ady);
                        },
                        [&](const PoolGeometry& pg) {
                          a.y = absolute(ref.y);
                          if (ref.indices) {
                            auto dx = ref::maxpool_backward(pg, absolute(in.dy), ref.indices);
                            if (dx.ok()) a.dx = std::move(dx).value();
                          }
                        },
                        [&](const AvgPoolGeometry& ag) {  // sums of |x| / divisor and |dy| / divisor
                          a.y = ref::avgpool_forward(ag, absolute(in.x));
                          a.dx = ref::avgpool_backward(ag, absolute(in.dy));
                        }},
             g);
  return a;
}

OpOutputs absolute_pass_for(const Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in,
                            const OpOutputs& ref) {
  return absolute_pass_for(backend, g, absolute_pass(c, g, in, ref));
}

OpOutputs absolute_pass_for(const Backend& backend, const OpGeometry& g, OpOutputs abs) {
  if (backend.name() == "reference" || !std::holds_alternative<ConvGeometry>(g) || !backend.numerics().transform()) {
    return abs;
  }
  for (Tensor* t : {&abs.y, &abs.dx, &abs.dw}) spread_over_planes(*t);
  return abs;
}

std::optional<OpOutputs> finite_part_pass(const Case& c, const OpGeometry& g, const OpInputs& in,
                                          const OpOutputs& ref) {
  auto finite = [](const Tensor& t) {
    return std::all_of(t.data.begin(), t.data.end(), [](double v) { return std::isfinite(v); });
  };
  if (finite(in.x) && finite(in.w) && finite(in.b) && finite(in.dy)) return std::nullopt;
  OpInputs part = in;
  for (Tensor* t : {&part.x, &part.w, &part.b, &part.dy}) {
    for (double& v : t->data) v = std::isfinite(v) ? v : 0.0;
  }
  // A max pool's y is a selection, not a sum (its magnitudes come from ref.y): only its
  // dx sums, through the oracle's indices.
  return absolute_pass(c, g, part, ref);
}

}  // namespace kc
