// Builders for Case values in tests: a conv or max-pool case in one call, padding specs
// by name.
#pragma once

#include <array>
#include <vector>

#include "kc/case.h"

namespace kc::test {

inline PadSpec explicit_pad(std::vector<std::array<int64_t, 2>> pairs) {
  return PadSpec{PadKind::kExplicit, std::move(pairs)};
}
inline PadSpec pad_kind(PadKind kind) { return PadSpec{kind, {}}; }

struct ConvSpec {
  int64_t batch = 1, channels = 1, out_channels = 1, groups = 1;
  Dims spatial, kernel, stride, dilation;
  PadSpec padding;
  PaddingMode mode = PaddingMode::kZeros;
  bool bias = false;
  DType dtype = DType::kF64;
};

inline Case conv_case(const ConvSpec& s) {
  Case c;
  c.dtype = s.dtype;
  c.input = InputSpec{s.batch, s.channels, s.spatial};
  ConvParams p;
  p.out_channels = s.out_channels;
  p.kernel = s.kernel;
  p.stride = s.stride;
  p.dilation = s.dilation;
  p.groups = s.groups;
  p.padding = s.padding;
  p.padding_mode = s.mode;
  p.bias = s.bias;
  c.op = p;
  return c;
}

// A max pool with explicit [lo, hi] pads (none: no padding) and data seed 7.
struct PoolSpec {
  int64_t batch = 1, channels = 1;
  Dims spatial, kernel, stride, dilation;
  std::vector<std::array<int64_t, 2>> pads;
  bool ceil_mode = false;
  PoolMode mode = PoolMode::kTraining;
  TieRule tie = TieRule::kFirst;
  Fill fill = Fill::kRandom;
  DType dtype = DType::kF64;
};

inline Case pool_case(const PoolSpec& s) {
  Case c;
  c.dtype = s.dtype;
  c.input = InputSpec{s.batch, s.channels, s.spatial};
  MaxPoolParams p;
  p.kernel = s.kernel;
  p.stride = s.stride;
  p.dilation = s.dilation;
  p.padding = explicit_pad(s.pads);
  p.ceil_mode = s.ceil_mode;
  p.mode = s.mode;
  p.tie = s.tie;
  c.op = p;
  c.data = DataSpec{7, s.fill};
  return c;
}

}  // namespace kc::test
