// Direct-loop definitions of the reference ops, used only by tests to prove the fast
// paths (im2col + GEMM) equal to the formula. Written independently of reference/src:
// every output is the literal sum of docs/ops.md, padding resolved per element.
// Slow by design (about 25 times the fast path); never linked into kcheck.
#pragma once

#include <optional>

#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::ref::direct {

// Row-major multi-index of flat position f in an array with extents `ext`.
inline Dims unflatten(int64_t f, const Dims& ext) {
  Dims r(ext.size(), 0);
  for (size_t j = ext.size(); j-- > 0;) {
    r[j] = f % ext[j];
    f /= ext[j];
  }
  return r;
}

Tensor conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b);
Tensor conv_backward_data(const ConvGeometry& g, const Tensor& dy, const Tensor& w);
Tensor conv_backward_weight(const ConvGeometry& g, const Tensor& x, const Tensor& dy);
Tensor conv_backward_bias(const ConvGeometry& g, const Tensor& dy);

struct PoolForward {
  Tensor y;
  IndexTensor indices;  // always computed here
};
// Brute force: for each output, enumerate every input element and test window membership.
PoolForward maxpool_forward(const PoolGeometry& g, const Tensor& x);
Tensor maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor& indices);

// Brute force: every kernel offset of every window, counted as the divisor counts it.
Tensor avgpool_forward(const AvgPoolGeometry& g, const Tensor& x);
Tensor avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy);

}  // namespace kc::ref::direct
