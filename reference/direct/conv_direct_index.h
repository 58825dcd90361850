// The index arithmetic of the direct-loop convolution (conv_direct.cpp): per-element
// padding sources and NCDHW offsets, written out plainly. Also used by test kernels that
// compute a convolution in another arithmetic by the same loops (tests/support/f32_direct.h).
#pragma once

#include <array>
#include <cstdint>

#include "kc/shape.h"

namespace kc::ref::direct {

// Input index copied by padded coordinate p, or -1 for a zero.
inline int64_t source(int64_t p, const DimGeometry& d, PaddingMode mode) {
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

}  // namespace kc::ref::direct
