// The reference max pooling, DESIGN section 3:
//   y[n, c, o] = max_k xp[n, c, o*s + k*d], padded elements are -inf and never selected.
// Index: flat position in the unpadded input plane of (n, c), row-major over the spatial
// dims (2-D: ih*W + iw). Ties: `first` keeps the first maximum in window scan order
// (row-major over kernel offsets), `last` the last; `any` is computed as `first` here
// (the checks accept any position holding the maximum). NaN propagates: a window with a
// NaN outputs NaN and points to its first (last) NaN. A window of only -inf outputs -inf
// and points to its first (last) element inside the input. An index is never -1.
// Backward: dx[i] = sum of dy[w] over windows w whose index is i; it is refused without
// indices (an inference-mode forward keeps none) rather than returning zeros.
#pragma once

#include <optional>

#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc::ref {

struct PoolForward {
  Tensor y;                            // [N, C, out...], f64
  std::optional<IndexTensor> indices;  // [N, C, out...], only in training mode
};

PoolForward maxpool_forward(const PoolGeometry& g, const Tensor& x);

// failed_precondition when indices is empty.
StatusOr<Tensor> maxpool_backward(const PoolGeometry& g, const Tensor& dy,
                                  const std::optional<IndexTensor>& indices);

}  // namespace kc::ref
