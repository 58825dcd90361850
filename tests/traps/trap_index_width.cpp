// The narrow-index traps (trap_index_width.h): each runs the zoo's correct conv
// (Bug::kNone) on inputs or with outputs moved the way its wrapped index moves them.
#include "trap_index_width.h"

#include <algorithm>

namespace kc::traps {
namespace {

ConvSetup correct(const ConvSetup& s) { return {Bug::kNone, s.form}; }

// x with sample n (or input channel c) read from where a wrapped index points.
Tensor wrapped_input(Bug bug, const ConvGeometry& g, const Tensor& x) {
  Tensor in = x;
  const int64_t plane = g.spatial.in_count(), sample = g.in_channels * plane;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const int64_t from_n = bug == Bug::kBatchIndex7Bits ? n % 128 : n;
      const int64_t from_c = bug == Bug::kChannelIndex8Bits ? c % 256 : c;
      if (from_n == n && from_c == c) continue;
      std::copy_n(x.data.begin() + from_n * sample + from_c * plane, plane, in.data.begin() + n * sample + c * plane);
    }
  }
  return in;
}

}  // namespace

bool is_index_width_trap(Bug bug) {
  return bug == Bug::kBatchIndex7Bits || bug == Bug::kChannelIndex8Bits || bug == Bug::kOutputIndex16Bits ||
         bug == Bug::kGemmMRowsInt16 || bug == Bug::kDwOutChannel7Bits;
}

Status index_width_conv_forward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                                const Tensor* b, bool relu, Tensor& y) {
  if (s.bug == Bug::kBatchIndex7Bits || s.bug == Bug::kChannelIndex8Bits) {
    return trap_conv_forward(correct(s), g, wrapped_input(s.bug, g, x), w, b, relu, y);
  }
  if (s.bug != Bug::kOutputIndex16Bits) return trap_conv_forward(correct(s), g, x, w, b, relu, y);
  Tensor right = y;  // the harness's buffer as handed in (poisoned): what is never written stays so
  KC_RETURN_IF_ERROR(trap_conv_forward(correct(s), g, x, w, b, relu, right));
  const int64_t out = g.spatial.out_count();
  for (int64_t plane = 0; plane < g.batch * g.out_channels; ++plane) {
    for (int64_t o = 0; o < out; ++o) y[plane * out + (o & 0xffff)] = right[plane * out + o];
  }
  return ok_status();
}

Status index_width_conv_backward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                                 const Tensor* b, bool relu, const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) {
  KC_RETURN_IF_ERROR(trap_conv_backward(correct(s), g, x, w, b, relu, dy, dx, dw, db));
  const int64_t out = g.spatial.out_count();
  if (s.bug == Bug::kGemmMRowsInt16 && g.batch * out > 32767) {
    Tensor cut = dy;  // rows m = n * P + p from 32767 on never reach the reduction
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t k = 0; k < g.out_channels; ++k)
        for (int64_t p = 0; p < out; ++p)
          if (n * out + p >= 32767) cut[(n * g.out_channels + k) * out + p] = 0.0;
    Tensor unused_dx = dx;
    return trap_conv_backward(correct(s), g, x, w, b, relu, cut, unused_dx, dw, db);
  }
  if (s.bug == Bug::kDwOutChannel7Bits && g.out_channels > 128) {
    const int64_t per = dw.size() / g.out_channels;
    Tensor moved = Tensor::zeros(dw.dtype, dw.shape);
    for (int64_t k = 0; k < g.out_channels; ++k) {
      std::copy_n(dw.data.begin() + k * per, per, moved.data.begin() + (k % 128) * per);
    }
    dw = moved;
  }
  return ok_status();
}

}  // namespace kc::traps
