// relu and conv_bias_relu as the composition conv -> + b -> relu (see activation.h).
#include "kc/ref/activation.h"

#include <cmath>

#include "core/invariant.h"

namespace kc::ref {

Tensor relu(const Tensor& x) {
  Tensor y = x;
  y.dtype = DType::kF64;
  for (double& v : y.data) v = (v > 0.0 || std::isnan(v)) ? v : 0.0;  // NaN propagates
  return y;
}

Tensor relu_backward(const Tensor& z, const Tensor& dy) {
  KC_INVARIANT(z.shape == dy.shape);
  Tensor dx = Tensor::zeros(DType::kF64, dy.shape);
  for (int64_t i = 0; i < dx.size(); ++i) dx[i] = z[i] > 0.0 ? dy[i] : 0.0;  // relu'(0) = 0
  return dx;
}

Tensor conv_bias_relu_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b) {
  return relu(conv_forward(g, x, w, &b));
}

ConvGrads conv_bias_relu_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
                                  const Tensor& dy) {
  const Tensor z = conv_forward(g, x, w, &b);  // recomputed pre-activation
  const Tensor dz = relu_backward(z, dy);
  ConvGrads r = conv_backward(g, x, w, dz);
  r.db = conv_backward_bias(g, dz);
  return r;
}

}  // namespace kc::ref
