// Padding in the four modes and its adjoint (see kc/ref/pad.h for the formulas).
// Works on three spatial dims (SpatialGeometry::as_3d) whatever the rank.
#include "kc/ref/pad.h"

#include <array>
#include <vector>

#include "core/invariant.h"

namespace kc::ref {
namespace {

// Per dim, the source index of every padded coordinate (-1: a zero).
std::array<std::vector<int64_t>, 3> source_tables(const std::array<DimGeometry, 3>& d, PaddingMode mode) {
  std::array<std::vector<int64_t>, 3> t;
  for (size_t a = 0; a < 3; ++a) {
    for (int64_t p = 0; p < d[a].padded(); ++p) t[a].push_back(pad_source(p, d[a], mode));
  }
  return t;
}

Dims padded_shape(const Dims& x_shape, const SpatialGeometry& g) {
  Dims s{x_shape[0], x_shape[1]};
  for (const DimGeometry& d : g.dims) s.push_back(d.padded());
  return s;
}

// Calls f(padded_flat, source_flat) for every padded element whose value comes from
// the input (source_flat indexes one plane of x; padded_flat one plane of xp).
template <class F>
void for_each_copied(const SpatialGeometry& g, PaddingMode mode, F f) {
  const auto d = g.as_3d();
  const auto src = source_tables(d, mode);
  int64_t p = 0;
  for (int64_t a = 0; a < d[0].padded(); ++a) {
    for (int64_t b = 0; b < d[1].padded(); ++b) {
      for (int64_t c = 0; c < d[2].padded(); ++c, ++p) {
        const int64_t sa = src[0][a], sb = src[1][b], sc = src[2][c];
        if (sa < 0 || sb < 0 || sc < 0) continue;
        f(p, (sa * d[1].in + sb) * d[2].in + sc);
      }
    }
  }
}

}  // namespace

int64_t pad_source(int64_t p, const DimGeometry& d, PaddingMode mode) {
  const int64_t i = p - d.pad_lo;  // coordinate relative to the first input element
  if (i >= 0 && i < d.in) return i;
  switch (mode) {
    case PaddingMode::kZeros:
      return -1;
    case PaddingMode::kReflect:
      return i < 0 ? -i : 2 * (d.in - 1) - i;  // mirror, edge once
    case PaddingMode::kReplicate:
      return i < 0 ? 0 : d.in - 1;
    case PaddingMode::kCircular:
      return ((i % d.in) + d.in) % d.in;
  }
  return -1;
}

Tensor pad(const Tensor& x, const SpatialGeometry& g, PaddingMode mode) {
  KC_INVARIANT(x.shape.size() == g.dims.size() + 2);
  Tensor xp = Tensor::zeros(x.dtype, padded_shape(x.shape, g));
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t in_plane = g.in_count(), pad_plane = g.padded_count();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const double* src = x.data.data() + pl * in_plane;
    double* dst = xp.data.data() + pl * pad_plane;
    for_each_copied(g, mode, [&](int64_t p, int64_t s) { dst[p] = src[s]; });
  }
  return xp;
}

Tensor pad_adjoint(const Tensor& dxp, const SpatialGeometry& g, PaddingMode mode) {
  KC_INVARIANT(dxp.shape.size() == g.dims.size() + 2);
  Dims x_shape{dxp.shape[0], dxp.shape[1]};
  for (const DimGeometry& d : g.dims) x_shape.push_back(d.in);
  Tensor dx = Tensor::zeros(DType::kF64, x_shape);
  const int64_t planes = x_shape[0] * x_shape[1];
  const int64_t in_plane = g.in_count(), pad_plane = g.padded_count();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const double* src = dxp.data.data() + pl * pad_plane;
    double* dst = dx.data.data() + pl * in_plane;
    for_each_copied(g, mode, [&](int64_t p, int64_t s) { dst[s] += src[p]; });
  }
  return dx;
}

}  // namespace kc::ref
