// Window geometry for the rule checks, computed from the resolved per-dim geometry of
// the shape contract (never from the reference): which input coordinates a window
// covers, whether it overlaps the padding, and how to name a set of positions of one
// spatial plane in a diagnosis ("rows 0 and 16 (the border)", "(5, 7)").
// Coordinates: a window o covers padded coordinates o*s + k*d (k < kernel); the input
// coordinate of padded p is p - pad_lo.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "findings.h"
#include "kc/shape.h"

namespace kc::checks::rules {

// Whether input coordinate i (unpadded, possibly outside [0, in)) is a tap of window o.
inline bool in_window(const DimGeometry& d, int64_t o, int64_t i) {
  const int64_t off = i + d.pad_lo - o * d.stride;
  return off >= 0 && off % d.dilation == 0 && off / d.dilation < d.kernel;
}

// Whether a tap of window o falls in the padding (its first or last tap is outside).
inline bool touches_padding(const DimGeometry& d, int64_t o) {
  const int64_t start = o * d.stride;
  return start < d.pad_lo || start + d.extent() > d.pad_lo + d.in;
}

// Whether window o has a tap inside the input.
inline bool touches_input(const DimGeometry& d, int64_t o) {
  for (int64_t k = 0; k < d.kernel; ++k) {
    const int64_t i = o * d.stride + k * d.dilation - d.pad_lo;
    if (i >= 0 && i < d.in) return true;
  }
  return false;
}

// The in-plane flat positions of the taps of window `out` (per-dim output coordinates)
// that lie inside the input, in scan order (row-major over kernel offsets).
inline std::vector<int64_t> window_taps(const SpatialGeometry& g, const std::vector<int64_t>& out) {
  std::vector<int64_t> taps;
  const Dims kdims = g.kernel_dims();
  for (int64_t k = 0; k < g.kernel_count(); ++k) {
    const std::vector<int64_t> ko = unravel(k, kdims);
    int64_t flat = 0;
    bool inside = true;
    for (size_t a = 0; a < g.dims.size() && inside; ++a) {
      const DimGeometry& d = g.dims[a];
      const int64_t i = out[a] * d.stride + ko[a] * d.dilation - d.pad_lo;
      inside = i >= 0 && i < d.in;
      flat = flat * d.in + i;
    }
    if (inside) taps.push_back(flat);
  }
  return taps;
}

// Per dim and coordinate: whether that output row/column's windows touch the padding.
inline std::vector<std::vector<char>> output_border(const SpatialGeometry& g) {
  std::vector<std::vector<char>> b;
  for (const DimGeometry& d : g.dims) {
    std::vector<char> dim(static_cast<size_t>(d.out));
    for (int64_t o = 0; o < d.out; ++o) dim[static_cast<size_t>(o)] = touches_padding(d, o);
    b.push_back(std::move(dim));
  }
  return b;
}

// Per dim and coordinate: whether an input row/column is within the padding width of
// an edge (at least the edge element itself).
inline std::vector<std::vector<char>> input_border(const SpatialGeometry& g) {
  std::vector<std::vector<char>> b;
  for (const DimGeometry& d : g.dims) {
    std::vector<char> dim(static_cast<size_t>(d.in));
    const int64_t lo = std::max<int64_t>(1, d.pad_lo), hi = std::max<int64_t>(1, d.pad_hi);
    for (int64_t i = 0; i < d.in; ++i) dim[static_cast<size_t>(i)] = i < lo || i >= d.in - hi;
    b.push_back(std::move(dim));
  }
  return b;
}

// A set of positions of one spatial plane (flags aggregated over the planes of a
// tensor), with the positions that could be flagged at all (`eligible`, empty: all).
struct PlaneSet {
  Dims extents;
  std::vector<char> flagged;
  std::vector<char> eligible;
  std::vector<std::vector<char>> border;  // per dim and coordinate; may be empty
};

namespace detail {

inline std::string dim_word(size_t rank, size_t a, bool plural) {
  static const char* const names3[] = {"depth slice", "row", "column"};
  const std::string w = rank == 1 ? "position" : names3[3 - rank + a];
  return plural ? w + "s" : w;
}

// "0 and 16", "0, 1, 2 and 5", "0, 1, 2, 3, 4, 5 and 9 more"
inline std::string join_coords(const std::vector<int64_t>& v) {
  std::string s;
  const size_t shown = std::min<size_t>(v.size(), 6);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) s += (i + 1 == shown && shown == v.size()) ? " and " : ", ";
    s += std::to_string(v[i]);
  }
  if (shown < v.size()) s += " and " + std::to_string(v.size() - shown) + " more";
  return s;
}

}  // namespace detail

namespace detail {

inline bool eligible(const PlaneSet& s, int64_t p) { return s.eligible.empty() || s.eligible[static_cast<size_t>(p)]; }

// Per dim a, the coordinates v whose every eligible position is flagged (whole slices);
// n_flag / n_elig count the flagged and eligible positions.
inline std::vector<std::vector<int64_t>> full_slices(const PlaneSet& s, int64_t& n_flag, int64_t& n_elig) {
  const size_t rank = s.extents.size();
  std::vector<std::vector<int64_t>> elig(rank), flag(rank), full(rank);
  for (size_t a = 0; a < rank; ++a) {
    elig[a].assign(static_cast<size_t>(s.extents[a]), 0);
    flag[a].assign(static_cast<size_t>(s.extents[a]), 0);
  }
  n_flag = n_elig = 0;
  for (int64_t p = 0; p < element_count(s.extents); ++p) {
    if (!eligible(s, p)) continue;
    const bool f = s.flagged[static_cast<size_t>(p)];
    ++n_elig;
    n_flag += f;
    const std::vector<int64_t> c = unravel(p, s.extents);
    for (size_t a = 0; a < rank; ++a) {
      ++elig[a][static_cast<size_t>(c[a])];
      flag[a][static_cast<size_t>(c[a])] += f;
    }
  }
  for (size_t a = 0; a < rank; ++a) {
    for (size_t v = 0; v < elig[a].size(); ++v) {
      if (elig[a][v] > 0 && flag[a][v] == elig[a][v]) full[a].push_back(static_cast<int64_t>(v));
    }
  }
  return full;
}

// Whether the whole slices of `dims` hold every flagged position (they hold only flagged
// ones by construction, so counting the eligible positions they cover is enough).
inline bool slices_cover(const PlaneSet& s, const std::vector<std::vector<int64_t>>& full,
                         const std::vector<size_t>& dims, int64_t n_flag) {
  if (dims.empty()) return false;
  int64_t n = 0;
  for (int64_t p = 0; p < element_count(s.extents); ++p) {
    if (!eligible(s, p)) continue;
    const std::vector<int64_t> c = unravel(p, s.extents);
    for (size_t a : dims) {
      if (std::find(full[a].begin(), full[a].end(), c[a]) == full[a].end()) continue;
      ++n;
      break;
    }
  }
  return n == n_flag;
}

// "(5, 7), (5, 8), (6, 1) and 3 more"
inline std::string name_points(const PlaneSet& s, int64_t n_flag) {
  std::string text;
  int64_t shown = 0;
  for (int64_t p = 0; p < element_count(s.extents) && shown < 3; ++p) {
    if (!eligible(s, p) || !s.flagged[static_cast<size_t>(p)]) continue;
    text += (shown++ ? ", " : "") + at(p, s.extents);
  }
  if (n_flag > shown) text += " and " + std::to_string(n_flag - shown) + " more";
  return text;
}

}  // namespace detail

// Names the flagged positions: whole slices when the set is exactly a union of slices
// (every eligible position of row 0 and of row 16), one dim if one suffices; otherwise
// up to three positions. Sets *border when every named slice lies at the border.
inline std::string describe_positions(const PlaneSet& s, bool* border = nullptr) {
  const size_t rank = s.extents.size();
  int64_t n_flag = 0, n_elig = 0;
  const std::vector<std::vector<int64_t>> full = detail::full_slices(s, n_flag, n_elig);
  if (border) *border = false;
  if (n_flag == 0) return "no position";
  if (n_flag == n_elig) return "every position";
  std::vector<size_t> use, all;
  for (size_t a = 0; a < rank; ++a) {
    if (full[a].empty()) continue;
    all.push_back(a);
    if (use.empty() && detail::slices_cover(s, full, {a}, n_flag)) use = {a};
  }
  if (use.empty() && detail::slices_cover(s, full, all, n_flag)) use = all;
  if (use.empty()) return detail::name_points(s, n_flag);
  std::string text;
  bool at_border = !s.border.empty();
  for (size_t a : use) {
    text += (text.empty() ? "" : " and ") + detail::dim_word(rank, a, full[a].size() > 1) + " " +
            detail::join_coords(full[a]);
    for (int64_t v : full[a]) at_border = at_border && s.border[a][static_cast<size_t>(v)];
  }
  if (border) *border = at_border;
  return at_border ? text + " (the border)" : text;
}

}  // namespace kc::checks::rules
