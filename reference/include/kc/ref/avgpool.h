// The reference average pooling (docs/ops.md, "Average pooling"), in f64:
//   y[n, c, o] = (sum of x over the window's input elements) / divisor(o)
//   dx[n, c, i] = sum over the windows o holding i of dy[n, c, o] / divisor(o)
// Padded elements are 0. divisor(o) is g.divisor when it is > 0; else, with
// count_include_pad, the window's extent clipped to the padded input [-lo, in + hi)
// (a ceil-mode overhang past the padding does not count); else the number of input
// elements it covers (validation refuses a window that covers none).
#pragma once

#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::ref {

Tensor avgpool_forward(const AvgPoolGeometry& g, const Tensor& x);
Tensor avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy);

}  // namespace kc::ref
