// Direct-loop definition of the convolution (DESIGN section 3), for tests only:
//   y[n, co, o] = b[co] + sum_ci sum_k w[co, ci, k] * xp[n, g*Cin/G + ci, o*s + k*d]
// and its adjoints written as the literal sums. Padding is resolved per element by its
// own source() below, deliberately not shared with reference/src/pad.cpp.
#include <array>

#include "kc/check.h"
#include "kc_direct.h"

namespace kc::ref::direct {
namespace {

// Input index copied by padded coordinate p, or -1 for a zero.
int64_t source(int64_t p, const DimGeometry& d, PaddingMode mode) {
  int64_t i = p - d.pad_lo;
  if (i >= 0 && i < d.in) return i;
  if (mode == PaddingMode::kZeros) return -1;
  if (mode == PaddingMode::kReplicate) return i < 0 ? 0 : d.in - 1;
  if (mode == PaddingMode::kCircular) {
    while (i < 0) i += d.in;
    return i % d.in;
  }
  return i < 0 ? -i : (d.in - 1) - (i - (d.in - 1));  // reflect about the edge element
}

using Pos = std::array<int64_t, 3>;

struct Conv {
  const ConvGeometry& g;
  std::array<DimGeometry, 3> d;
  explicit Conv(const ConvGeometry& geo) : g(geo), d(geo.spatial.as_3d()) {}

  int64_t cpg() const { return g.in_per_group(); }
  int64_t kpg() const { return g.out_per_group(); }
  int64_t x_index(int64_t n, int64_t c, const Pos& i) const {
    return (((n * g.in_channels + c) * d[0].in + i[0]) * d[1].in + i[1]) * d[2].in + i[2];
  }
  int64_t y_index(int64_t n, int64_t co, const Pos& o) const {
    return (((n * g.out_channels + co) * d[0].out + o[0]) * d[1].out + o[1]) * d[2].out + o[2];
  }
  int64_t w_index(int64_t co, int64_t ci, const Pos& k) const {
    return (((co * cpg() + ci) * d[0].kernel + k[0]) * d[1].kernel + k[1]) * d[2].kernel + k[2];
  }
  // Source input position read by output o through tap k, or false where xp is zero.
  bool tap_source(const Pos& o, const Pos& k, Pos& src) const {
    for (size_t a = 0; a < 3; ++a) {
      src[a] = source(o[a] * d[a].stride + k[a] * d[a].dilation, d[a], g.mode);
      if (src[a] < 0) return false;
    }
    return true;
  }
  template <class F>
  void each(const Pos& extent, F f) const {
    for (int64_t a = 0; a < extent[0]; ++a)
      for (int64_t b = 0; b < extent[1]; ++b)
        for (int64_t c = 0; c < extent[2]; ++c) f(Pos{a, b, c});
  }
  Pos out() const { return {d[0].out, d[1].out, d[2].out}; }
  Pos ker() const { return {d[0].kernel, d[1].kernel, d[2].kernel}; }
};

}  // namespace

Tensor conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b) {
  KC_CHECK(x.shape == g.x_shape() && w.shape == g.w_shape());
  const Conv cv(g);
  Tensor y = Tensor::zeros(DType::kF64, g.y_shape());
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < g.out_channels; ++co) {
      const int64_t grp = co / cv.kpg();
      cv.each(cv.out(), [&](const Pos& o) {
        double acc = b ? (*b)[co] : 0.0;
        for (int64_t ci = 0; ci < cv.cpg(); ++ci) {
          cv.each(cv.ker(), [&](const Pos& k) {
            Pos s;
            if (cv.tap_source(o, k, s)) acc += w[cv.w_index(co, ci, k)] * x[cv.x_index(n, grp * cv.cpg() + ci, s)];
          });
        }
        y[cv.y_index(n, co, o)] = acc;
      });
    }
  }
  return y;
}

Tensor conv_backward_data(const ConvGeometry& g, const Tensor& dy, const Tensor& w) {
  KC_CHECK(dy.shape == g.y_shape() && w.shape == g.w_shape());
  const Conv cv(g);
  Tensor dx = Tensor::zeros(DType::kF64, g.x_shape());
  // dx[src] gets dy[o] * w[k] for every (o, k) whose tap reads src (padding copies too).
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < g.out_channels; ++co) {
      const int64_t grp = co / cv.kpg();
      cv.each(cv.out(), [&](const Pos& o) {
        const double gy = dy[cv.y_index(n, co, o)];
        for (int64_t ci = 0; ci < cv.cpg(); ++ci) {
          cv.each(cv.ker(), [&](const Pos& k) {
            Pos s;
            if (cv.tap_source(o, k, s)) dx[cv.x_index(n, grp * cv.cpg() + ci, s)] += gy * w[cv.w_index(co, ci, k)];
          });
        }
      });
    }
  }
  return dx;
}

Tensor conv_backward_weight(const ConvGeometry& g, const Tensor& x, const Tensor& dy) {
  KC_CHECK(x.shape == g.x_shape() && dy.shape == g.y_shape());
  const Conv cv(g);
  Tensor dw = Tensor::zeros(DType::kF64, g.w_shape());
  // dw[co, ci, k] = sum_n sum_o dy[n, co, o] * xp[n, g*Cin/G + ci, o*s + k*d]
  for (int64_t co = 0; co < g.out_channels; ++co) {
    const int64_t grp = co / cv.kpg();
    for (int64_t ci = 0; ci < cv.cpg(); ++ci) {
      cv.each(cv.ker(), [&](const Pos& k) {
        double acc = 0.0;
        for (int64_t n = 0; n < g.batch; ++n) {
          cv.each(cv.out(), [&](const Pos& o) {
            Pos s;
            if (cv.tap_source(o, k, s)) acc += dy[cv.y_index(n, co, o)] * x[cv.x_index(n, grp * cv.cpg() + ci, s)];
          });
        }
        dw[cv.w_index(co, ci, k)] = acc;
      });
    }
  }
  return dw;
}

Tensor conv_backward_bias(const ConvGeometry& g, const Tensor& dy) {
  const Conv cv(g);
  Tensor db = Tensor::zeros(DType::kF64, g.b_shape());
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co)
      cv.each(cv.out(), [&](const Pos& o) { db[co] += dy[cv.y_index(n, co, o)]; });
  return db;
}

}  // namespace kc::ref::direct
