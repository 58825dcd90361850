// Max-pool geometry and the compact argmax encoding (docs/ops.md, "Max pooling"), and
// the average-pool window arithmetic (AvgPoolShape), shared by the pool kernels and
// their CPU tests. Training mode keeps, per output, the chosen tap's offset inside its
// window (the flat kernel index, row-major), in uint8 below 255 taps and uint16 below
// 65535; the all-ones value means "never written". At the interface an offset expands
// to the int64 flat position in the unpadded (n, c) plane, and an int64 index that is
// no tap of its window is refused on the way back. Both backwards are gathers in
// ascending output order, without atomics: deterministic.
// More on the method: docs/notes.md, section gpu/include/kc/gpu/pool_shape.h.
#pragma once

#include <cfloat>
#include <cstdint>

#include "kc/gpu/conv_shape.h"
#include "kc/gpu/hd.h"

namespace kc {
struct PoolGeometry;
struct AvgPoolGeometry;
}  // namespace kc

namespace kc::gpu {

// The window geometry of one (n, c) plane; tap() gives flat plane positions.
struct PoolShape : WindowShape {
  int planes = 1;  // batch * channels
};

PoolShape pool_shape(const PoolGeometry& g);

// Offset storage: 1 or 2 bytes per output, or 0 when the window is too large (refused).
KC_HD int offset_bytes_for(int kernel_count) { return kernel_count < 0xFF ? 1 : kernel_count < 0xFFFF ? 2 : 0; }
KC_HD int offset_sentinel(int bytes) { return bytes == 1 ? 0xFF : 0xFFFF; }

// Flat plane index of the tap `offset` of output o_flat; -1 for a tap in the padding.
KC_HD int64_t offset_to_index(const PoolShape& s, int o_flat, int offset) {
  int o[3], k[3];
  unflatten3(o_flat, s.out, o);
  unflatten3(offset, s.kernel, k);
  return s.tap(o, k);
}

// The offset of the tap of window o_flat that lies on plane index `index`, or -1 when
// no tap of that window does (a bad index: outside the plane or outside the window).
KC_HD int index_to_offset(const PoolShape& s, int o_flat, int64_t index) {
  if (index < 0 || index >= s.in_count()) return -1;
  int o[3], i[3], flat = 0;
  unflatten3(o_flat, s.out, o);
  unflatten3(static_cast<int>(index), s.in, i);
  for (int d = 0; d < 3; ++d) {
    const int t = i[d] + s.pad_lo[d] - o[d] * s.stride[d];
    if (t < 0 || t % s.dilation[d] != 0 || t / s.dilation[d] >= s.kernel[d]) return -1;
    flat = flat * s.kernel[d] + t / s.dilation[d];
  }
  return flat;
}

// Calls f(o_flat, offset) for every window that has a tap on input i (per-dim coords),
// in ascending o_flat order: kernel offsets descend, so output coordinates ascend.
template <class F>
KC_HD void for_each_window_of(const PoolShape& s, const int i[3], F&& f) {
  for (int k0 = s.kernel[0] - 1; k0 >= 0; --k0) {
    const int t0 = i[0] + s.pad_lo[0] - k0 * s.dilation[0];
    if (t0 < 0 || t0 % s.stride[0] != 0 || t0 / s.stride[0] >= s.out[0]) continue;
    for (int k1 = s.kernel[1] - 1; k1 >= 0; --k1) {
      const int t1 = i[1] + s.pad_lo[1] - k1 * s.dilation[1];
      if (t1 < 0 || t1 % s.stride[1] != 0 || t1 / s.stride[1] >= s.out[1]) continue;
      for (int k2 = s.kernel[2] - 1; k2 >= 0; --k2) {
        const int t2 = i[2] + s.pad_lo[2] - k2 * s.dilation[2];
        if (t2 < 0 || t2 % s.stride[2] != 0 || t2 / s.stride[2] >= s.out[2]) continue;
        const int o = ((t0 / s.stride[0]) * s.out[1] + t1 / s.stride[1]) * s.out[2] + t2 / s.stride[2];
        f(o, (k0 * s.kernel[1] + k1) * s.kernel[2] + k2);
      }
    }
  }
}

// The max-pool choice rule of docs/ops.md ("Max pooling"), one candidate at a time in scan order:
// NaN beats every number; between two NaNs or two equal numbers (two -inf too) only
// `last` moves, so a window of only -inf points to its first or last element by the rule.
// `any` is computed as `first`. The first input tap is always taken.
KC_HD bool pool_replaces(bool have, float best, float v, bool tie_last) {
  if (!have) return true;
  const bool best_nan = best != best, v_nan = v != v;
  if (best_nan) return v_nan && tie_last;
  if (v_nan) return true;
  return v > best || (tie_last && v == best);
}

// Average pooling (dilation 1). pad_hi bounds the divisor of count_include_pad (a
// ceil_mode overhang past the padding does not count); divisor > 0 replaces the rule.
struct AvgPoolShape : WindowShape {
  int planes = 1;  // batch * channels
  int pad_hi[3] = {0, 0, 0};
  bool count_include_pad = true;
  long long divisor = 0;
};

AvgPoolShape avgpool_shape(const AvgPoolGeometry& g);

// Window o along dim d: the input range [lo, hi) it reads (empty for a window only in
// padding) and its factor of the divisor there: the window clipped to
// [-pad_lo, in + pad_hi) (count_include_pad) or to [0, in).
struct AvgSpan {
  int lo = 0, hi = 0, counted = 1;
};

KC_HD AvgSpan avg_span(const AvgPoolShape& s, int d, int o) {
  const int start = o * s.stride[d] - s.pad_lo[d];
  const int end = start + s.kernel[d];
  const int edge = s.in[d] + s.pad_hi[d];
  AvgSpan r;
  r.lo = start < 0 ? 0 : start;
  r.hi = end < s.in[d] ? end : s.in[d];
  if (r.hi < r.lo) r.hi = r.lo;
  r.counted = s.count_include_pad ? (end < edge ? end : edge) - start : r.hi - r.lo;
  return r;
}

// The windows along dim d that read input i: [*first, *last] (empty when first > last).
KC_HD void avg_windows_of(const AvgPoolShape& s, int d, int i, int* first, int* last) {
  const int t = i + s.pad_lo[d];  // o * stride <= t < o * stride + kernel
  const int past = t - s.kernel[d];
  *first = past < 0 ? 0 : past / s.stride[d] + 1;
  const int l = t / s.stride[d];
  *last = l < s.out[d] - 1 ? l : s.out[d] - 1;
}

KC_HD float avg_divisor(const AvgPoolShape& s, const AvgSpan sp[3]) {
  if (s.divisor > 0) return static_cast<float>(s.divisor);
  return static_cast<float>(static_cast<long long>(sp[0].counted) * sp[1].counted * sp[2].counted);
}

// y of window o (per-dim coords): the f32 sum of its input elements in row-major order,
// divided once. load(flat plane index) gives an element as float.
template <class Load>
KC_HD float avg_window_mean(const AvgPoolShape& s, const int o[3], Load&& load) {
  const AvgSpan sp[3] = {avg_span(s, 0, o[0]), avg_span(s, 1, o[1]), avg_span(s, 2, o[2])};
  float sum = 0.f;
  for (int i0 = sp[0].lo; i0 < sp[0].hi; ++i0) {
    for (int i1 = sp[1].lo; i1 < sp[1].hi; ++i1) {
      const int row = (i0 * s.in[1] + i1) * s.in[2];
      for (int i2 = sp[2].lo; i2 < sp[2].hi; ++i2) sum += load(row + i2);
    }
  }
  return sum / avg_divisor(s, sp);
}

// dx of input i (per-dim coords): dy / divisor of every window that reads it, added in
// ascending output order (a fixed order: the gather is deterministic). load(flat plane
// output index) gives dy as float.
template <class Load>
KC_HD float avg_input_grad(const AvgPoolShape& s, const int i[3], Load&& load) {
  int first[3], last[3];
  for (int d = 0; d < 3; ++d) avg_windows_of(s, d, i[d], &first[d], &last[d]);
  float sum = 0.f;
  for (int o0 = first[0]; o0 <= last[0]; ++o0) {
    AvgSpan sp[3];
    sp[0] = avg_span(s, 0, o0);
    for (int o1 = first[1]; o1 <= last[1]; ++o1) {
      sp[1] = avg_span(s, 1, o1);
      for (int o2 = first[2]; o2 <= last[2]; ++o2) {
        sp[2] = avg_span(s, 2, o2);
        sum += load((o0 * s.out[1] + o1) * s.out[2] + o2) / avg_divisor(s, sp);
      }
    }
  }
  return sum;
}

}  // namespace kc::gpu
