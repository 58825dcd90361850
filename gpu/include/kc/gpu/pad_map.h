// Padding modes other than zeros (docs/ops.md, "Convolution") by pre-padding: a kernel builds the
// padded input xp (each padded position copies its source element), the convolution
// runs with no padding, and the backward folds the padded gradient dxp back onto the
// source elements. Shared by the pad kernels and their CPU tests.
//
// Per dim, with q = p - lo the position relative to the input:
//   zeros      q outside [0, in): no source (-1)
//   reflect    -q on the left, 2(in-1) - q on the right (edge not repeated; pad < in)
//   replicate  clamp to [0, in-1]
//   circular   q + in on the left, q - in on the right (pad <= in: one wrap at most)
// The inverse, the padded positions that copy input i, is at most three ranges per dim,
// listed in ascending order so that the fold sums in a fixed order (deterministic).
#pragma once

#include "kc/gpu/hd.h"

namespace kc {
struct ConvGeometry;
}

namespace kc::gpu {

enum class PadMode : int { kZeros = 0, kReflect = 1, kReplicate = 2, kCircular = 3 };

// Source of padded position p along one dim, or -1 (zeros outside the input).
KC_HD int pad_source(PadMode mode, int p, int in, int lo) {
  const int q = p - lo;
  if (q >= 0 && q < in) return q;
  switch (mode) {
    case PadMode::kReflect:
      return q < 0 ? -q : 2 * (in - 1) - q;
    case PadMode::kReplicate:
      return q < 0 ? 0 : in - 1;
    case PadMode::kCircular:
      return q < 0 ? q + in : q - in;
    default:
      return -1;
  }
}

// Half-open ranges [begin, end) of padded positions whose source is one input element.
struct PadRanges {
  int count = 0;
  int begin[3] = {0, 0, 0};
  int end[3] = {0, 0, 0};
  KC_HD void add(int b, int e) {
    begin[count] = b;
    end[count] = e;
    ++count;
  }
};

// The padded positions (in [0, padded)) that copy input element i of one dim.
KC_HD PadRanges pad_copies_of(PadMode mode, int i, int in, int lo, int padded) {
  PadRanges r;
  const int self = i + lo;
  if (mode == PadMode::kReplicate) {
    r.add(i == 0 ? 0 : self, i == in - 1 ? padded : self + 1);
    return r;
  }
  if (mode == PadMode::kReflect && i >= 1 && lo - i >= 0) r.add(lo - i, lo - i + 1);
  if (mode == PadMode::kCircular && self - in >= 0) r.add(self - in, self - in + 1);
  r.add(self, self + 1);
  if (mode == PadMode::kReflect && i <= in - 2) {
    const int p = lo + 2 * (in - 1) - i;
    if (p >= lo + in && p < padded) r.add(p, p + 1);
  }
  if (mode == PadMode::kCircular && self + in < padded) r.add(self + in, self + in + 1);
  return r;
}

// One pre-pad job: `planes` (batch * channels) planes of in[] extents into padded[].
struct PadShape {
  int planes = 1;
  int in[3] = {1, 1, 1};
  int lo[3] = {0, 0, 0};
  int padded[3] = {1, 1, 1};
  PadMode mode = PadMode::kZeros;
  KC_HD int in_count() const { return in[0] * in[1] * in[2]; }
  KC_HD int padded_count() const { return padded[0] * padded[1] * padded[2]; }
};

PadShape pad_shape(const ConvGeometry& g);

}  // namespace kc::gpu
