// The reference max pooling (docs/ops.md, "Max pooling"), forward and backward, in f64.
//
//   y[n, c, o]   = max_k xp[n, c, o*s + k*d - lo]   (xp: x with -inf padding; padded
//                                                     positions are never selected)
//   idx[n, c, o] = flat position of the chosen element in the unpadded (n, c) plane,
//                  row-major over the spatial dims: (id*H + ih)*W + iw
//   dx[n, c, i]  = sum of dy[n, c, o] over the outputs o with idx[n, c, o] == i
// More on the method: docs/notes.md, section reference/src/maxpool.cpp.
#include "kc/ref/maxpool.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "core/invariant.h"

namespace kc::ref {
namespace {

using Geometry3 = std::array<DimGeometry, 3>;

// The element chosen so far in one window; index == -1 until an input element is seen.
struct Choice {
  double value = 0.0;
  int64_t index = -1;
};

// Input coordinate of kernel offset k in output window o along one dim:
// position o*s + k*d in the padded extent, minus the low padding. It may fall outside
// [0, in), which means the element is padding (-inf, never selected).
int64_t input_coord(const DimGeometry& d, int64_t o, int64_t k) { return o * d.stride + k * d.dilation - d.pad_lo; }

bool inside(const DimGeometry& d, int64_t i) { return i >= 0 && i < d.in; }

// Whether candidate v, met after the current choice in scan order, replaces it.
//   NaN beats every number; between two NaNs, or two equal numbers (two -inf too), only
//   `last` moves: a window of only -inf points to its first or last element by the rule.
bool replaces(const Choice& cur, double v, TieRule tie) {
  if (cur.index < 0) return true;
  const bool later_wins_tie = tie == TieRule::kLast;  // kAny is computed as kFirst
  const bool cur_nan = std::isnan(cur.value);
  const bool v_nan = std::isnan(v);
  if (cur_nan) return v_nan && later_wins_tie;
  if (v_nan) return true;
  if (v > cur.value) return true;
  return v == cur.value && later_wins_tie;
}

// Chooses the maximum of window (od, oh, ow) of one input plane (row-major, in_count long).
Choice pool_window(const Geometry3& g, const double* plane, int64_t od, int64_t oh, int64_t ow, TieRule tie) {
  Choice best;
  for (int64_t kd = 0; kd < g[0].kernel; ++kd) {
    const int64_t id = input_coord(g[0], od, kd);
    if (!inside(g[0], id)) continue;
    for (int64_t kh = 0; kh < g[1].kernel; ++kh) {
      const int64_t ih = input_coord(g[1], oh, kh);
      if (!inside(g[1], ih)) continue;
      for (int64_t kw = 0; kw < g[2].kernel; ++kw) {
        const int64_t iw = input_coord(g[2], ow, kw);
        if (!inside(g[2], iw)) continue;
        const int64_t i = (id * g[1].in + ih) * g[2].in + iw;
        if (replaces(best, plane[i], tie)) best = Choice{plane[i], i};
      }
    }
  }
  // Validation refuses a case with a window of only padding (see validate.cpp).
  KC_INVARIANT(best.index >= 0);
  return best;
}

// Pools one (n, c) plane: y and idx point at that plane's out_count outputs.
void pool_plane(const Geometry3& g, TieRule tie, const double* x, double* y, int64_t* idx) {
  int64_t o = 0;
  for (int64_t od = 0; od < g[0].out; ++od) {
    for (int64_t oh = 0; oh < g[1].out; ++oh) {
      for (int64_t ow = 0; ow < g[2].out; ++ow, ++o) {
        const Choice c = pool_window(g, x, od, oh, ow, tie);
        y[o] = c.value;
        idx[o] = c.index;
      }
    }
  }
}

}  // namespace

PoolForward maxpool_forward(const PoolGeometry& g, const Tensor& x) {
  KC_INVARIANT(x.shape == g.x_shape());
  KC_INVARIANT(x.size() == element_count(g.x_shape()));
  const Geometry3 g3 = g.spatial.as_3d();
  const int64_t planes = g.batch * g.channels;
  const int64_t in_count = g.spatial.in_count();
  const int64_t out_count = g.spatial.out_count();

  PoolForward r;
  r.y = Tensor::zeros(DType::kF64, g.y_shape());
  IndexTensor idx{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(planes * out_count), -1)};
  for (int64_t p = 0; p < planes; ++p) {
    pool_plane(g3, g.tie, x.data.data() + p * in_count, r.y.data.data() + p * out_count,
               idx.data.data() + p * out_count);
  }
  // Inference mode keeps no indices: a backward on its result is refused, not zero.
  if (g.mode == PoolMode::kTraining) r.indices = std::move(idx);
  return r;
}

StatusOr<Tensor> maxpool_backward(const PoolGeometry& g, const Tensor& dy, const std::optional<IndexTensor>& indices) {
  if (!indices.has_value()) {
    return failed_precondition(
        "maxpool backward needs the argmax indices of a training-mode forward; an "
        "inference-mode forward keeps none (set maxpool.mode: training)");
  }
  KC_INVARIANT(dy.shape == g.y_shape());
  KC_INVARIANT(indices->shape == g.y_shape());
  KC_INVARIANT(dy.size() == indices->size());
  const int64_t planes = g.batch * g.channels;
  const int64_t in_count = g.spatial.in_count();
  const int64_t out_count = g.spatial.out_count();

  // dx[i] = sum of dy[o] over the outputs o of the same plane whose index is i;
  // overlapping windows that chose the same element add.
  Tensor dx = Tensor::zeros(DType::kF64, g.x_shape());
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t o = 0; o < out_count; ++o) {
      const int64_t w = p * out_count + o;
      const int64_t i = indices->data[static_cast<size_t>(w)];
      // Indices may come from a candidate (tie `any` routes by the kernel's own index),
      // so an index outside the plane is bad input, not a broken invariant.
      if (i < 0 || i >= in_count) {
        return out_of_range("maxpool indices: element " + std::to_string(w) + " is " + std::to_string(i) +
                            ", outside the input plane [0, " + std::to_string(in_count) + ")");
      }
      dx[p * in_count + i] += dy[w];
    }
  }
  return dx;
}

}  // namespace kc::ref
