// The average pool module's calls of a backend: avgpool_forward into y,
// avgpool_backward into dx.
#include "backend/op_call.h"
#include "ops/op_module.h"

namespace kc {

void forward_into(Backend& be, const Case& c, const AvgPoolGeometry& g, const OpInputs& in, OpOutputs& o) {
  OpCall call(be, "avgpool_forward", true, in, o);
  call.hand(o.y, 0, c.dtype, g.y_shape());
  call.run([&] { return be.avgpool_forward(g, in.x, o.y); });
}

void backward_into(Backend& be, const Case& c, const AvgPoolGeometry& g, const OpInputs& in, OpOutputs& o) {
  OpCall call(be, "avgpool_backward", false, in, o);
  call.hand(o.dx, 2, c.dtype, g.x_shape());
  call.run([&] { return be.avgpool_backward(g, in.dy, o.dx); });
}

}  // namespace kc
