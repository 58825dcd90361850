// The trap zoo's max pooling: a direct-loop forward (y and indices) and backward (dy
// scattered through the indices) written apart from reference/. With Bug::kNone it
// follows docs/ops.md, "Max pooling" (tie rules, NaN propagation, -inf padding never selected,
// in-plane indices, refusal without indices); each pool trap switches on one bug.
// Average pooling likewise: a tap-by-tap forward and a scatter backward that count each
// window's divisor as they go (PyTorch's rule, kc/ref/avgpool.h); each avg_* trap
// switches on one bug.
#pragma once

#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"
#include "trap_list.h"

namespace kc::traps {

// indices is null in inference mode. A trap that keeps an extra window hands back y and
// indices with its own, larger shape (pool_ceil_extra_window).
Status trap_pool_forward(Bug bug, const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices);
// x: the input of the last forward (the tie-mask trap recomputes its mask from it), or null.
Status trap_pool_backward(Bug bug, const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, const Tensor* x,
                          Tensor& dx);

// The avg_* traps: their bug is in the average-pool kernels only.
bool is_avgpool_trap(Bug bug);
// The pool_* traps that run only max-pool and stack cases: their bug is in the max-pool
// kernels (a stack's pool included) and their clean case is a max pool. The others
// (pool_inference_in_training, pool_stale_indices, pool_window_u8_offset) are clean on a
// conv case, so they run every case.
bool runs_max_pool_cases_only(Bug bug);

Status trap_avgpool_forward(Bug bug, const AvgPoolGeometry& g, const Tensor& x, Tensor& y);
Status trap_avgpool_backward(Bug bug, const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx);

}  // namespace kc::traps
