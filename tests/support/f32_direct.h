// A correct f32 kernel that computes in real f32: direct loops over the definition with
// float accumulators in sequential order, the relu mask from its own z, max pool with
// the tie rule 'any' taken as 'last'. Unlike F32Accumulation (f32_accumulation.h),
// whose errors are drawn within the model's bounds, its rounding is what f32 hardware
// does, so that it can decide a relu input or a pool window within rounding otherwise
// than the oracle: the control for the stack checks' routing gate. f64 cases go to the
// reference.
#pragma once

#include <vector>

#include "conv_direct_index.h"  // kc_reference_direct
#include "support/delegating_backend.h"

namespace kc::test {
namespace f32_direct {

using ref::direct::Conv;
using ref::direct::Pos;

// z = conv(x, w) + b, summed in loop order in an accumulator of type Acc (float, or
// Eigen::half for a kernel with 16-bit accumulators): each product is formed in f32 and
// added in f32, and the sum rounded to Acc after every term.
template <class Acc = float>
std::vector<float> forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b) {
  const Conv cv(g);
  std::vector<float> z(static_cast<size_t>(element_count(g.y_shape())));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < g.out_channels; ++co) {
      const int64_t grp = co / cv.kpg();
      cv.each(cv.out(), [&](const Pos& o) {
        Acc acc(0.0f);
        for (int64_t ci = 0; ci < cv.cpg(); ++ci) {
          cv.each(cv.ker(), [&](const Pos& k) {
            Pos s;
            if (!cv.tap_source(o, k, s)) return;
            acc = Acc(float(acc) + float(w[cv.w_index(co, ci, k)]) * float(x[cv.x_index(n, grp * cv.cpg() + ci, s)]));
          });
        }
        if (b) acc = Acc(float(acc) + float((*b)[co]));
        z[static_cast<size_t>(cv.y_index(n, co, o))] = float(acc);
      });
    }
  }
  return z;
}

}  // namespace f32_direct

class F32Direct final : public DelegatingBackend {
 public:
  explicit F32Direct(std::string name = "f32-direct") : DelegatingBackend(std::move(name)) {}

  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (x.dtype == DType::kF64) return reference().conv_forward(g, x, w, b, relu, y);
    const std::vector<float> z = f32_direct::forward(g, x, w, b);
    for (size_t i = 0; i < z.size(); ++i) y.data[i] = relu && !(z[i] > 0.0f) ? 0.0f : z[i];
    return ok_status();
  }

  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    PoolGeometry h = g;
    if (h.tie == TieRule::kAny) h.tie = TieRule::kLast;  // 'any' allows another tap among equals
    return reference().maxpool_forward(h, x, y, indices);
  }

  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    if (x.dtype == DType::kF64) return reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db);
    using f32_direct::Conv;
    using f32_direct::Pos;
    const Conv cv(g);
    std::vector<float> gz(dy.data.begin(), dy.data.end());  // the cotangent of z
    if (relu) {
      const std::vector<float> z = f32_direct::forward(g, x, w, b);
      for (size_t i = 0; i < z.size(); ++i) gz[i] = z[i] > 0.0f ? gz[i] : 0.0f;
    }
    std::vector<float> fdx(dx.data.size(), 0.0f), fdw(dw.data.size(), 0.0f), fdb(db ? db->data.size() : 0, 0.0f);
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t co = 0; co < g.out_channels; ++co) {
        const int64_t grp = co / cv.kpg();
        cv.each(cv.out(), [&](const Pos& o) {
          const float gy = gz[static_cast<size_t>(cv.y_index(n, co, o))];
          if (db) fdb[static_cast<size_t>(co)] += gy;
          for (int64_t ci = 0; ci < cv.cpg(); ++ci) {
            cv.each(cv.ker(), [&](const Pos& k) {
              Pos s;
              if (!cv.tap_source(o, k, s)) return;
              fdx[static_cast<size_t>(cv.x_index(n, grp * cv.cpg() + ci, s))] += gy * float(w[cv.w_index(co, ci, k)]);
              fdw[static_cast<size_t>(cv.w_index(co, ci, k))] += gy * float(x[cv.x_index(n, grp * cv.cpg() + ci, s)]);
            });
          }
        });
      }
    }
    for (size_t i = 0; i < fdx.size(); ++i) dx.data[i] = fdx[i];
    for (size_t i = 0; i < fdw.size(); ++i) dw.data[i] = fdw[i];
    for (size_t i = 0; i < fdb.size(); ++i) db->data[i] = fdb[i];
    return ok_status();
  }
};

}  // namespace kc::test
