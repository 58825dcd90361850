// The conv module's absolute pass (judge/absolute_pass.h; conv_bias_relu's too): the
// oracle's conv on |x|, |w|, |b| and |dy|, the fused op's dy masked by relu'.
#include <cmath>
#include <utility>

#include "backend/invoke.h"
#include "kc/ref/conv.h"
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

OpOutputs absolute_pass_of(const Case& c, const ConvGeometry& g, const OpInputs& in, const OpOutputs&) {
  OpOutputs a;
  const Tensor ax = absolute(in.x), aw = absolute(in.w), ab = absolute(in.b),
               ady = relu_masked(c, g, in, absolute(in.dy));
  a.y = ref::conv_forward(g, ax, aw, g.bias ? &ab : nullptr);
  a.dx = ref::conv_backward_data(g, ady, aw);
  a.dw = ref::conv_backward_weight(g, ax, ady);
  if (g.bias) a.db = ref::conv_backward_bias(g, ady);
  return a;
}

OracleForward oracle_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b) {
  return {ref::conv_forward(g, x, w, g.bias ? &b : nullptr), std::nullopt};
}

}  // namespace kc
