// The max pool module's calls of a backend: maxpool_forward into y (and the indices in
// training mode), maxpool_backward into dx from those indices.
#include "backend/op_call.h"
#include "ops/op_module.h"

namespace kc {

void forward_into(Backend& be, const Case& c, const PoolGeometry& g, const OpInputs& in, OpOutputs& o) {
  OpCall call(be, "maxpool_forward", true, in, o);
  call.hand(o.y, 0, c.dtype, g.y_shape());
  if (g.mode == PoolMode::kTraining) call.hand_indices(g.y_shape());
  call.run([&] { return be.maxpool_forward(g, in.x, o.y, o.indices ? &*o.indices : nullptr); });
}

void backward_into(Backend& be, const Case& c, const PoolGeometry& g, const OpInputs& in, OpOutputs& o) {
  OpCall call(be, "maxpool_backward", false, in, o);
  call.hand(o.dx, 2, c.dtype, g.x_shape());
  call.run([&] { return be.maxpool_backward(g, in.dy, o.indices ? &*o.indices : nullptr, o.dx); });
}

}  // namespace kc
