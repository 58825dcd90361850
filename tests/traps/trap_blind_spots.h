// The traps of the blind spots the checks (docs/checks.md) must reach (sizes past kernel
// thresholds, special values in 16-bit stores, all-zero data, state kept between calls,
// inputs written): a backend that runs the zoo's correct conv and pool and plants one
// mistake that shows only on such cases:
//   pool_stale_indices   max pool backward routes through the indices its last forward kept
//   relu_stale_mask      conv_bias_relu backward routes through the relu mask its last forward kept
//   plan_ignores_batch   conv forward runs the first call's plan, looked up by all but the batch
//   smaller_batch_stale_y conv forward of a smaller batch than its first call's gives that call's y
//   plane_index_15_bits  conv forward keeps the index within a plane in 15 bits (planes past 2^15)
//   weights_cached_by_address conv forward reads w as it first found it in that buffer
//   batch_tail_dropped   samples past the last whole block of 8 come out 0 (batch 9, 17, 33)
//   channel_tile_tail    input channels past the last whole tile of 32 are left out (33, 65, ...)
//   out_channel_tile_tail dw and db of output channels past the last whole tile of 64 stay 0
//   extent_tile_tail     the last output column is never written when the extent is 32k + 1
//   pool_window_u8_offset window offsets kept in 8 bits (windows of more than 256 taps)
//   bf16_nan_to_inf      bf16 stores turn NaN into an infinity
//   f16_inf_saturates    f16 stores turn an infinity into 65504
//   zero_sample_skipped  an all-zero sample of x is skipped, its y never written
//   zero_dy_early_return a sample (conv) or plane (pool) of dy that is all zero: dx never written
//   writes_weights       the backward steps w by -dw/4, in place (inputs are const)
#pragma once

#include "kc/backend.h"
#include "kc/case.h"
#include "trap_list.h"

namespace kc::traps {

bool is_blind_spot_trap(Bug bug);

// The four calls of one blind-spot trap; the state traps keep what the last forward
// left, as a kernel's workspace would.
class BlindSpotTrap {
 public:
  explicit BlindSpotTrap(Bug bug) : bug_(bug) {}
  void set_form(PadKind form) { form_ = form; }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu, Tensor& y);
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db);
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices);
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx);

 private:
  Bug bug_;
  PadKind form_ = PadKind::kExplicit;
  Tensor mask_;                        // relu_stale_mask: the last forward's y
  IndexTensor kept_;                   // pool_stale_indices: the last forward's indices
  int64_t plan_batch_ = 0;             // plan_ignores_batch: the batch of the first call's plan
  Tensor stale_y_;                     // smaller_batch_stale_y: the first call's y
  Tensor cached_w_;                    // weights_cached_by_address: w as first read from...
  const double* cached_at_ = nullptr;  // ...this buffer
};

}  // namespace kc::traps
