// The reference average pooling (kc/ref/avgpool.h), forward and backward, in f64. Both
// walk each window once over its input elements; the divisor is computed per window
// from the clipped extents along each dim, so that no division depends on a count
// accumulated while summing.
#include "kc/ref/avgpool.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace kc::ref {
namespace {

using Geometry3 = std::array<DimGeometry, 3>;

// The input range [lo, hi) window o reads along one dim, and its divisor factor there.
struct Span {
  int64_t lo = 0, hi = 0;
  int64_t counted = 1;
};

Span span_of(const DimGeometry& d, int64_t o, bool count_include_pad) {
  const int64_t start = o * d.stride - d.pad_lo;  // in unpadded coordinates
  const int64_t end = start + d.kernel;
  Span s{std::max<int64_t>(start, 0), std::min(end, d.in), 0};
  s.counted = count_include_pad ? std::min(end, d.in + d.pad_hi) - start : s.hi - s.lo;
  if (s.hi < s.lo) s.hi = s.lo;  // a window only in padding reads nothing
  return s;
}

// Calls f(flat output index within the plane, the three spans, divisor) for every window.
template <class F>
void each_window(const AvgPoolGeometry& g, F f) {
  const Geometry3 d = g.spatial.as_3d();
  for (int64_t od = 0; od < d[0].out; ++od) {
    const Span sd = span_of(d[0], od, g.count_include_pad);
    for (int64_t oh = 0; oh < d[1].out; ++oh) {
      const Span sh = span_of(d[1], oh, g.count_include_pad);
      for (int64_t ow = 0; ow < d[2].out; ++ow) {
        const Span sw = span_of(d[2], ow, g.count_include_pad);
        const int64_t divisor = g.divisor > 0 ? g.divisor : sd.counted * sh.counted * sw.counted;
        f((od * d[1].out + oh) * d[2].out + ow, std::array<Span, 3>{sd, sh, sw}, static_cast<double>(divisor));
      }
    }
  }
}

}  // namespace

Tensor avgpool_forward(const AvgPoolGeometry& g, const Tensor& x) {
  Tensor y = Tensor::zeros(DType::kF64, g.y_shape());
  const Geometry3 d = g.spatial.as_3d();
  const int64_t planes = g.batch * g.channels, in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  for (int64_t p = 0; p < planes; ++p) {
    const double* xp = x.data.data() + p * in_count;
    double* yp = y.data.data() + p * out_count;
    each_window(g, [&](int64_t o, const std::array<Span, 3>& s, double divisor) {
      double sum = 0.0;
      for (int64_t id = s[0].lo; id < s[0].hi; ++id) {
        for (int64_t ih = s[1].lo; ih < s[1].hi; ++ih) {
          for (int64_t iw = s[2].lo; iw < s[2].hi; ++iw) sum += xp[(id * d[1].in + ih) * d[2].in + iw];
        }
      }
      yp[o] = sum / divisor;
    });
  }
  return y;
}

Tensor avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy) {
  Tensor dx = Tensor::zeros(DType::kF64, g.x_shape());
  const Geometry3 d = g.spatial.as_3d();
  const int64_t planes = g.batch * g.channels, in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  for (int64_t p = 0; p < planes; ++p) {
    double* dxp = dx.data.data() + p * in_count;
    const double* dyp = dy.data.data() + p * out_count;
    each_window(g, [&](int64_t o, const std::array<Span, 3>& s, double divisor) {
      const double share = dyp[o] / divisor;
      for (int64_t id = s[0].lo; id < s[0].hi; ++id) {
        for (int64_t ih = s[1].lo; ih < s[1].hi; ++ih) {
          for (int64_t iw = s[2].lo; iw < s[2].hi; ++iw) dxp[(id * d[1].in + ih) * d[2].in + iw] += share;
        }
      }
    });
  }
  return dx;
}

}  // namespace kc::ref
