// The reference max pooling, docs/ops.md, "Max pooling":
//   y[n, c, o] = max_k xp[n, c, o*s + k*d], padded elements are -inf and never selected.
// More on the method: docs/notes.md, section reference/include/kc/ref/maxpool.h.
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
StatusOr<Tensor> maxpool_backward(const PoolGeometry& g, const Tensor& dy, const std::optional<IndexTensor>& indices);

}  // namespace kc::ref
