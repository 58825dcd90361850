// The max pool module's absolute pass (judge/absolute_pass.h): y is a selection, |y|
// itself; dx routes |dy| through the oracle's indices.
#include <cmath>
#include <utility>

#include "backend/invoke.h"
#include "kc/ref/maxpool.h"
#include "ops/op_module.h"

namespace kc {

OpOutputs absolute_pass_of(const Case&, const PoolGeometry& g, const OpInputs& in, const OpOutputs& ref) {
  OpOutputs a;
  a.y = absolute(ref.y);
  if (ref.indices) {
    auto dx = ref::maxpool_backward(g, absolute(in.dy), ref.indices);
    if (dx.ok()) a.dx = std::move(dx).value();
  }
  return a;
}

OracleForward oracle_forward(const PoolGeometry& g, const Tensor& x, const Tensor&, const Tensor&) {
  ref::PoolForward f = ref::maxpool_forward(g, x);
  return {std::move(f.y), std::move(f.indices)};
}

}  // namespace kc
