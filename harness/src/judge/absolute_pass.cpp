// absolute_pass(): the oracle on absolute values; absolute_pass_for() spreads it over
// output planes for a backend that declares a transform algorithm.
#include "judge/absolute_pass.h"

#include <variant>

#include "judge/transform_bound.h"
#include "kc/overloaded.h"
#include "kc/ref/avgpool.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"

namespace kc {

OpOutputs absolute_pass(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref) {
  (void)c;
  OpOutputs a;
  std::visit(Overloaded{[&](const ConvGeometry& cg) {
                          const Tensor ax = absolute(in.x), aw = absolute(in.w), ab = absolute(in.b),
                                       ady = absolute(in.dy);
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

}  // namespace kc
