// Channels-first <-> channels-last index maps for the CUTLASS engine, whose kernels take
// activations NDHWC and filters KTRSC (KRSC in 2-D) while the contract's tensors are
// NCDHW and [K, C/G, T, R, S] (docs/ops.md). One map serves both tensors: a tensor of
// `outer` blocks (N samples, or K filters) of `channels` x `spatial` elements, where
// channels-first holds a block as [channels][spatial] and channels-last as
// [spatial][channels]. Shared by the conversion kernels and their CPU tests (KC_HD).
#pragma once

#include <cstdint>

#include "kc/gpu/hd.h"

namespace kc::gpu {

struct LayoutShape {
  int64_t outer = 1;     // N, or K for filters
  int64_t channels = 1;  // C, or C/G for filters
  int64_t spatial = 1;   // D*H*W, or T*R*S
  KC_HD int64_t size() const { return outer * channels * spatial; }
};

// Where channels-first element i lies in the channels-last copy.
KC_HD int64_t channels_last_index(const LayoutShape& s, int64_t i) {
  const int64_t block = s.channels * s.spatial;
  const int64_t o = i / block, rest = i % block;
  const int64_t c = rest / s.spatial, x = rest % s.spatial;
  return o * block + x * s.channels + c;
}

// Where channels-last element j lies in the channels-first copy (the inverse).
KC_HD int64_t channels_first_index(const LayoutShape& s, int64_t j) {
  const int64_t block = s.channels * s.spatial;
  const int64_t o = j / block, rest = j % block;
  const int64_t x = rest / s.channels, c = rest % s.channels;
  return o * block + c * s.spatial + x;
}

}  // namespace kc::gpu
