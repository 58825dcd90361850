// Direct-loop definition of the convolution (docs/ops.md, "Convolution"), for tests only:
//   y[n, co, o] = b[co] + sum_ci sum_k w[co, ci, k] * xp[n, g*Cin/G + ci, o*s + k*d]
// and its adjoints written as the literal sums. Padding is resolved per element by its
// own source() (conv_direct_index.h), deliberately not shared with reference/src/pad.cpp.
#include <array>

#include "conv_direct_index.h"
#include "core/invariant.h"
#include "kc_direct.h"

namespace kc::ref::direct {

Tensor conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b) {
  KC_INVARIANT(x.shape == g.x_shape() && w.shape == g.w_shape());
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
  KC_INVARIANT(dy.shape == g.y_shape() && w.shape == g.w_shape());
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
  KC_INVARIANT(x.shape == g.x_shape() && dy.shape == g.y_shape());
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
