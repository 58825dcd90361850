// Window offsets <-> plane indices, looping over three spatial dims whatever the rank
// (as_3d() prepends unit dims, whose single tap is always inside).
#include "pool_workspace.h"

#include <array>
#include <string>

namespace kc::onednn {
namespace {

using Dims3 = std::array<DimGeometry, 3>;

// The input coordinate of tap k of output o in one dim (may lie in the padding).
int64_t tap_position(const DimGeometry& d, int64_t o, int64_t k) { return o * d.stride - d.pad_lo + k * d.dilation; }

// Flat plane index of the tap at kernel offset `offset` of output (o0, o1, o2), or -1.
int64_t plane_index(const Dims3& d, const std::array<int64_t, 3>& o, int64_t offset) {
  const std::array<int64_t, 3> k = {offset / (d[1].kernel * d[2].kernel), offset / d[2].kernel % d[1].kernel,
                                    offset % d[2].kernel};
  int64_t index = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t p = tap_position(d[i], o[i], k[i]);
    if (p < 0 || p >= d[i].in) return -1;
    index = index * d[i].in + p;
  }
  return index;
}

// Kernel offset of plane index `index` in the window of output o, or -1 when it is not
// one of the window's positions.
int64_t window_offset(const Dims3& d, const std::array<int64_t, 3>& o, int64_t index) {
  const std::array<int64_t, 3> p = {index / (d[1].in * d[2].in), index / d[2].in % d[1].in, index % d[2].in};
  int64_t offset = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t r = p[i] - tap_position(d[i], o[i], 0);
    if (r < 0 || r % d[i].dilation != 0 || r / d[i].dilation >= d[i].kernel) return -1;
    offset = offset * d[i].kernel + r / d[i].dilation;
  }
  return offset;
}

int64_t first_padding_tap(const Dims3& d, const std::array<int64_t, 3>& o) {
  const int64_t taps = d[0].kernel * d[1].kernel * d[2].kernel;
  for (int64_t t = 0; t < taps; ++t) {
    if (plane_index(d, o, t) < 0) return t;
  }
  return -1;
}

// Calls f(element, o) for every output element, plain order.
template <class F>
void for_each_output(const PoolGeometry& g, const Dims3& d, F&& f) {
  int64_t e = 0;
  for (int64_t plane = 0; plane < g.batch * g.channels; ++plane) {
    for (int64_t o0 = 0; o0 < d[0].out; ++o0) {
      for (int64_t o1 = 0; o1 < d[1].out; ++o1) {
        for (int64_t o2 = 0; o2 < d[2].out; ++o2) f(e++, std::array<int64_t, 3>{o0, o1, o2});
      }
    }
  }
}

}  // namespace

void decode_window_offsets(const PoolGeometry& g, const std::vector<int64_t>& offsets, IndexTensor& indices) {
  const Dims3 d = g.spatial.as_3d();
  for_each_output(g, d, [&](int64_t e, const std::array<int64_t, 3>& o) {
    indices.data[static_cast<size_t>(e)] = plane_index(d, o, offsets[static_cast<size_t>(e)]);
  });
}

StatusOr<std::vector<int64_t>> encode_window_offsets(const PoolGeometry& g, const IndexTensor& indices) {
  const Dims3 d = g.spatial.as_3d();
  const int64_t plane = g.spatial.in_count();
  std::vector<int64_t> offsets(static_cast<size_t>(indices.size()), -1);
  int64_t bad = -1;
  for_each_output(g, d, [&](int64_t e, const std::array<int64_t, 3>& o) {
    const int64_t i = indices.data[static_cast<size_t>(e)];
    int64_t t = -1;
    if (i >= 0 && i < plane) t = window_offset(d, o, i);
    if (i == -1) t = first_padding_tap(d, o);
    if (t < 0 && bad < 0) bad = e;
    offsets[static_cast<size_t>(e)] = t;
  });
  if (bad >= 0) {
    return invalid_argument("maxpool indices: element " + std::to_string(bad) + " is " +
                            std::to_string(indices.data[static_cast<size_t>(bad)]) +
                            ", not a position of its window (oneDNN's backward routes by window offset)");
  }
  return offsets;
}

}  // namespace kc::onednn
