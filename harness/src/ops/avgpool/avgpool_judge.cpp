// The average pool module's absolute pass (judge/absolute_pass.h): the sums of |x| /
// divisor and of |dy| / divisor.
#include <cmath>
#include <utility>

#include "backend/invoke.h"
#include "kc/ref/avgpool.h"
#include "ops/op_module.h"

namespace kc {

OpOutputs absolute_pass_of(const Case&, const AvgPoolGeometry& g, const OpInputs& in, const OpOutputs&) {
  OpOutputs a;
  a.y = ref::avgpool_forward(g, absolute(in.x));
  a.dx = ref::avgpool_backward(g, absolute(in.dy));
  return a;
}

OracleForward oracle_forward(const AvgPoolGeometry& g, const Tensor& x, const Tensor&, const Tensor&) {
  return {ref::avgpool_forward(g, x), std::nullopt};
}

}  // namespace kc
