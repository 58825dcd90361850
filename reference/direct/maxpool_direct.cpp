// Direct (brute-force) definition of max pooling (docs/ops.md, "Max pooling"), used only by tests to
// prove reference/src/maxpool.cpp. Written independently of it: for every output it
// enumerates every element of the input plane and tests window membership per dim,
//   input coordinate i is in window o  <=>  i + lo == o*s + k*d for some 0 <= k < kernel,
// then places the members at their kernel scan-order slot (row-major over kernel offsets)
// and applies the tie rule on that ordered list. Padding is never a member, so it is
// never selected. Backward gathers, per input element, dy over the outputs whose index
// names it. Slow by design.
// More on the method: docs/notes.md, section reference/direct/maxpool_direct.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/invariant.h"
#include "kc_direct.h"

namespace kc::ref::direct {
namespace {

// The kernel offset k with i + lo == o*s + k*d along one dim, or -1 if there is none.
int64_t kernel_offset(const DimGeometry& d, int64_t o, int64_t i) {
  const int64_t rel = i + d.pad_lo - o * d.stride;
  if (rel < 0 || rel % d.dilation != 0) return -1;
  const int64_t k = rel / d.dilation;
  return k < d.kernel ? k : -1;
}

// Flat input positions inside window `o`, in kernel scan order.
std::vector<int64_t> window_members(const SpatialGeometry& s, const Dims& o) {
  const Dims in = s.in_dims();
  std::vector<int64_t> slot(static_cast<size_t>(s.kernel_count()), -1);
  for (int64_t i = 0; i < s.in_count(); ++i) {
    const Dims coord = unflatten(i, in);
    int64_t key = 0;  // row-major position of the kernel offset vector
    bool member = true;
    for (size_t j = 0; j < coord.size() && member; ++j) {
      const int64_t k = kernel_offset(s.dims[j], o[j], coord[j]);
      member = k >= 0;
      key = key * s.dims[j].kernel + k;
    }
    if (member) slot[static_cast<size_t>(key)] = i;
  }
  std::vector<int64_t> members;
  for (int64_t i : slot) {
    if (i >= 0) members.push_back(i);
  }
  return members;
}

// The chosen member: the first NaN, else the first element equal to the maximum, where
// "first" is in scan order for tie first/any and in reverse scan order for tie last
// (a window of only -inf too: its maximum is -inf, held by every member).
int64_t choose(std::vector<int64_t> members, const double* plane, TieRule tie) {
  KC_INVARIANT(!members.empty());
  if (tie == TieRule::kLast) std::reverse(members.begin(), members.end());
  for (int64_t i : members) {
    if (std::isnan(plane[i])) return i;
  }
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i : members) m = std::max(m, plane[i]);
  for (int64_t i : members) {
    if (plane[i] == m) return i;
  }
  KC_INVARIANT(false && "a maximum must be attained");
  return -1;
}

}  // namespace

PoolForward maxpool_forward(const PoolGeometry& g, const Tensor& x) {
  KC_INVARIANT(x.shape == g.x_shape());
  const int64_t planes = g.batch * g.channels;
  const int64_t in_count = g.spatial.in_count();
  const int64_t out_count = g.spatial.out_count();
  const Dims out = g.spatial.out_dims();
  PoolForward r;
  r.y = Tensor::zeros(DType::kF64, g.y_shape());
  r.indices.shape = g.y_shape();
  r.indices.data.assign(static_cast<size_t>(planes * out_count), -1);
  for (int64_t p = 0; p < planes; ++p) {
    const double* plane = x.data.data() + p * in_count;
    for (int64_t o = 0; o < out_count; ++o) {
      const int64_t i = choose(window_members(g.spatial, unflatten(o, out)), plane, g.tie);
      r.y[p * out_count + o] = plane[i];
      r.indices.data[static_cast<size_t>(p * out_count + o)] = i;
    }
  }
  return r;
}

Tensor maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor& indices) {
  KC_INVARIANT(dy.shape == g.y_shape() && indices.shape == g.y_shape());
  const int64_t planes = g.batch * g.channels;
  const int64_t in_count = g.spatial.in_count();
  const int64_t out_count = g.spatial.out_count();
  Tensor dx = Tensor::zeros(DType::kF64, g.x_shape());
  // dx[i] = sum of dy[o] over the outputs o of the plane whose index is i.
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < in_count; ++i) {
      double sum = 0.0;
      for (int64_t o = 0; o < out_count; ++o) {
        if (indices.data[static_cast<size_t>(p * out_count + o)] == i) sum += dy[p * out_count + o];
      }
      dx[p * in_count + i] = sum;
    }
  }
  return dx;
}

}  // namespace kc::ref::direct
