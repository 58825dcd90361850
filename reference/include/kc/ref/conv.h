// The reference convolution (cross-correlation), docs/ops.md, "Convolution":
//   y[n, co, o] = b[co] + sum_ci sum_k w[co, ci, k] * xp[n, g*Cin/G + ci, o*s + k*d]
// with co in group g, w of shape [Cout, Cin/G, k...] and xp the padded input.
// Accumulation is f64 whatever the case dtype; outputs are f64 tensors.
// Geometry comes from a validated case; tensor shapes must match it (KC_INVARIANT).
#pragma once

#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::ref {

struct ConvGrads {
  Tensor dx;  // [N, Cin, in...]
  Tensor dw;  // [Cout, Cin/G, k...]: sum over the batch and every output position
  Tensor db;  // [Cout]: sum of dy over the batch and positions (empty without bias)
};

// b may be null (no bias).
Tensor conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b);
Tensor conv_backward_data(const ConvGeometry& g, const Tensor& dy, const Tensor& w);
Tensor conv_backward_weight(const ConvGeometry& g, const Tensor& x, const Tensor& dy);
Tensor conv_backward_bias(const ConvGeometry& g, const Tensor& dy);
// All three gradients (db only when g.bias).
ConvGrads conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy);

}  // namespace kc::ref
