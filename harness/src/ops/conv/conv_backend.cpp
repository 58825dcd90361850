// The conv module's calls of a backend (conv_bias_relu's too: the relu is a flag of
// the same calls): conv_forward into y, conv_backward into dx, dw and db.
#include "backend/op_call.h"
#include "ops/op_module.h"

namespace kc {

void forward_into(Backend& be, const Case& c, const ConvGeometry& g, const OpInputs& in, OpOutputs& o) {
  OpCall call(be, "conv_forward", true, in, o);
  call.hand(o.y, 0, c.dtype, g.y_shape());
  call.run([&] { return be.conv_forward(g, in.x, in.w, g.bias ? &in.b : nullptr, op_traits(c).relu, o.y); });
}

void backward_into(Backend& be, const Case& c, const ConvGeometry& g, const OpInputs& in, OpOutputs& o) {
  OpCall call(be, "conv_backward", false, in, o);
  call.hand(o.dx, 2, c.dtype, g.x_shape());
  call.hand(o.dw, 3, c.dtype, g.w_shape());
  if (g.bias) {
    call.hand(o.db, 4, c.dtype, g.b_shape());
  } else {
    o.handed[4] = o.db.data.data();
  }
  call.run([&] {
    return be.conv_backward(g, in.x, in.w, g.bias ? &in.b : nullptr, op_traits(c).relu, in.dy, o.dx, o.dw,
                            g.bias ? &o.db : nullptr);
  });
}

}  // namespace kc
