// The traps of the corpus's blind spots (trap_blind_spots.h): each runs the zoo's correct
// conv or pool (Bug::kNone) and then plants one mistake a real kernel makes only on a
// path that small, finite, dense data on a fresh backend never reaches.
#include "trap_blind_spots.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "trap_conv.h"
#include "trap_pool.h"

namespace kc::traps {
namespace {

double poison_value() { return poisoned(DType::kF64, {1})[0]; }

// [outer, inner) blocks of a tensor whose dim 0 (and 1) index samples (and channels).
int64_t per_sample(const Tensor& t) { return t.shape.empty() || t.shape[0] == 0 ? 0 : t.size() / t.shape[0]; }

bool all_zero(const Tensor& t, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (t[i] != 0.0) return false;
  }
  return true;
}

// A store that turns every NaN into an infinity of its sign (a bf16 conversion that
// truncates a NaN whose high mantissa bits are 0), or every infinity into the largest
// finite f16 (a saturating conversion).
void store_badly(Bug bug, Tensor* t) {
  if (t == nullptr) return;
  const bool bf16 = bug == Bug::kBf16NanToInf && t->dtype == DType::kBF16;
  const bool f16 = bug == Bug::kF16InfSaturates && t->dtype == DType::kF16;
  for (double& v : t->data) {
    if (bf16 && std::isnan(v)) v = std::copysign(std::numeric_limits<double>::infinity(), v);
    if (f16 && std::isinf(v)) v = std::copysign(65504.0, v);
  }
}

// The first index of channel tail: channels past the last whole tile of `tile`, when
// there are more than `tile` and not a whole number of tiles (none otherwise).
int64_t tail_start(int64_t count, int64_t tile) {
  return count > tile && count % tile != 0 ? count / tile * tile : count;
}

// Global pool window offsets kept in 8 bits: an index into a window of more than 256
// taps points to the tap 256 * k before the right one (row-major within the window).
void wrap_offsets(const PoolGeometry& g, IndexTensor& idx) {
  if (g.spatial.kernel_count() <= 256) return;
  const std::array<DimGeometry, 3> d = g.spatial.as_3d();
  const int64_t out_plane = g.spatial.out_count();
  for (size_t i = 0; i < idx.data.size(); ++i) {
    int64_t o = static_cast<int64_t>(i) % out_plane, flat = idx.data[i];
    std::array<int64_t, 3> start{}, tap{};
    for (int a = 2; a >= 0; --a) {
      start[a] = (o % d[a].out) * d[a].stride - d[a].pad_lo;
      o /= d[a].out;
    }
    int64_t rest = flat, offset = 0;
    std::array<int64_t, 3> at{};
    for (int a = 2; a >= 0; --a) at[a] = rest % d[a].in, rest /= d[a].in;
    for (int a = 0; a < 3; ++a) offset = offset * d[a].kernel + (at[a] - start[a]) / d[a].dilation;
    offset %= 256;
    for (int a = 2; a >= 0; --a) tap[a] = offset % d[a].kernel, offset /= d[a].kernel;
    int64_t wrapped = 0;
    for (int a = 0; a < 3; ++a) wrapped = wrapped * d[a].in + start[a] + tap[a] * d[a].dilation;
    idx.data[i] = wrapped;
  }
}

}  // namespace

bool is_blind_spot_trap(Bug bug) {
  switch (bug) {
    case Bug::kPoolStaleIndices:
    case Bug::kReluStaleMask:
    case Bug::kPlanIgnoresBatch:
    case Bug::kSmallerBatchStaleY:
    case Bug::kWeightsCachedByAddress:
    case Bug::kPlaneIndex15Bits:
    case Bug::kBatchTailDropped:
    case Bug::kChannelTileTail:
    case Bug::kOutChannelTileTail:
    case Bug::kExtentTileTail:
    case Bug::kPoolWindowU8Offset:
    case Bug::kBf16NanToInf:
    case Bug::kF16InfSaturates:
    case Bug::kZeroSampleSkipped:
    case Bug::kZeroDyEarlyReturn:
    case Bug::kWritesWeights:
      return true;
    default:
      return false;
  }
}

Status BlindSpotTrap::conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                                   Tensor& y) {
  Tensor xin = x;
  if (bug_ == Bug::kChannelTileTail) {  // the K loop's tail of input channels is dropped
    const int64_t cpg = g.in_per_group(), from = tail_start(cpg, 32), plane = g.spatial.in_count();
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t c = 0; c < g.in_channels; ++c)
        if (c % cpg >= from) std::fill_n(xin.data.begin() + (n * g.in_channels + c) * plane, plane, 0.0);
  }
  if (bug_ == Bug::kPlaneIndex15Bits) {  // the index within a plane kept in 15 bits: element i reads i & 0x7fff
    const int64_t plane = g.spatial.in_count();
    for (int64_t p = 0; p < g.batch * g.in_channels; ++p)
      for (int64_t i = 32768; i < plane; ++i) xin[p * plane + i] = x[p * plane + (i & 0x7fff)];
  }
  if (bug_ == Bug::kWeightsCachedByAddress && (w.data.data() != cached_at_ || w.shape != cached_w_.shape)) {
    cached_w_ = w;  // "converted" once per buffer: new values in the same buffer are never read
    cached_at_ = w.data.data();
  }
  const Tensor& wk = bug_ == Bug::kWeightsCachedByAddress ? cached_w_ : w;
  KC_RETURN_IF_ERROR(trap_conv_forward({Bug::kNone, form_}, g, xin, wk, b, relu, y));
  const int64_t ys = per_sample(y), xs = per_sample(x);
  if (bug_ == Bug::kSmallerBatchStaleY) {  // a call of a smaller batch than the first reads its workspace
    if (plan_batch_ == 0) plan_batch_ = g.batch, stale_y_ = y;
    if (g.batch < plan_batch_) std::copy_n(stale_y_.data.begin(), y.size(), y.data.begin());
  }
  if (bug_ == Bug::kPlanIgnoresBatch) {  // the first call's plan, looked up by all but the batch
    if (plan_batch_ == 0) plan_batch_ = g.batch;
    if (g.batch > plan_batch_) std::fill(y.data.begin() + plan_batch_ * ys, y.data.end(), 0.0);
  }
  if (bug_ == Bug::kBatchTailDropped) {  // samples past the last whole block of 8 come out 0
    std::fill(y.data.begin() + tail_start(g.batch, 8) * ys, y.data.end(), 0.0);
  }
  if (bug_ == Bug::kZeroSampleSkipped) {  // an all-zero sample is skipped, its y never written
    for (int64_t n = 0; n < g.batch; ++n)
      if (all_zero(x, n * xs, (n + 1) * xs)) std::fill_n(y.data.begin() + n * ys, ys, poison_value());
  }
  if (bug_ == Bug::kExtentTileTail) {  // a tail of exactly one output column is never written
    const int64_t last = g.spatial.dims.back().out;
    if (last > 32 && last % 32 == 1) {
      for (int64_t i = last - 1; i < y.size(); i += last) y[i] = poison_value();
    }
  }
  if (bug_ == Bug::kReluStaleMask && relu) mask_ = y;  // kept for the backward, in the backend
  store_badly(bug_, &y);
  return ok_status();
}

Status BlindSpotTrap::conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                                    const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) {
  if (bug_ == Bug::kReluStaleMask && relu && mask_.shape == dy.shape) {
    Tensor dz = dy;  // routed through the mask the last forward kept, whichever data it had
    for (int64_t i = 0; i < dz.size(); ++i) dz[i] = mask_[i] > 0.0 ? dz[i] : 0.0;
    KC_RETURN_IF_ERROR(trap_conv_backward({Bug::kNone, form_}, g, x, w, b, false, dz, dx, dw, db));
  } else {
    KC_RETURN_IF_ERROR(trap_conv_backward({Bug::kNone, form_}, g, x, w, b, relu, dy, dx, dw, db));
  }
  if (bug_ == Bug::kOutChannelTileTail) {  // dw and db of the last partial tile of 64 outputs stay 0
    const int64_t from = tail_start(g.out_channels, 64), per = per_sample(dw);
    std::fill(dw.data.begin() + from * per, dw.data.end(), 0.0);
    if (db != nullptr) std::fill(db->data.begin() + from, db->data.end(), 0.0);
  }
  if (bug_ == Bug::kZeroDyEarlyReturn) {  // a sample whose dy is all zero: dx never written
    const int64_t ds = per_sample(dy), xs = per_sample(dx);
    for (int64_t n = 0; n < g.batch; ++n)
      if (all_zero(dy, n * ds, (n + 1) * ds)) std::fill_n(dx.data.begin() + n * xs, xs, poison_value());
  }
  if (bug_ == Bug::kWritesWeights) {  // an optimizer step fused into the backward, on the const w
    Tensor& wrong = const_cast<Tensor&>(w);
    for (int64_t i = 0; i < w.size() && i < dw.size(); ++i) wrong[i] -= 0.25 * dw[i];
  }
  for (Tensor* t : {&dx, &dw, db}) store_badly(bug_, t);
  return ok_status();
}

Status BlindSpotTrap::maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) {
  KC_RETURN_IF_ERROR(trap_pool_forward(Bug::kNone, g, x, y, indices));
  if (indices != nullptr && bug_ == Bug::kPoolWindowU8Offset) wrap_offsets(g, *indices);
  if (indices != nullptr && bug_ == Bug::kPoolStaleIndices) kept_ = *indices;  // a workspace of the backend
  store_badly(bug_, &y);
  return ok_status();
}

Status BlindSpotTrap::maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices,
                                       Tensor& dx) {
  const bool stale = bug_ == Bug::kPoolStaleIndices && indices != nullptr && kept_.shape == indices->shape;
  KC_RETURN_IF_ERROR(trap_pool_backward(Bug::kNone, g, dy, stale ? &kept_ : indices, nullptr, dx));
  if (bug_ == Bug::kZeroDyEarlyReturn) {  // a plane whose dy is all zero: its dx never written
    const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
    for (int64_t p = 0; p < g.batch * g.channels; ++p)
      if (all_zero(dy, p * out, (p + 1) * out)) std::fill_n(dx.data.begin() + p * in, in, poison_value());
  }
  store_badly(bug_, &dx);
  return ok_status();
}

}  // namespace kc::traps
