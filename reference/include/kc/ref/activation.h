// relu and the fused conv_bias_relu, checked against their composition.
//   relu(x) = x > 0 ? x : 0, NaN propagates; relu'(x) = 1 for x > 0 and 0 otherwise
//   (0 at exactly 0).
//   conv_bias_relu(x, w, b) = relu(conv(x, w) + b); its backward recomputes the
//   pre-activation z = conv(x, w) + b and routes dy through relu'(z).
#pragma once

#include "kc/ref/conv.h"
#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::ref {

Tensor relu(const Tensor& x);
// dx = dy * relu'(z), elementwise; z is the relu's input.
Tensor relu_backward(const Tensor& z, const Tensor& dy);

Tensor conv_bias_relu_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b);
ConvGrads conv_bias_relu_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
                                  const Tensor& dy);

}  // namespace kc::ref
