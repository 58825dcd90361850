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

// The copy kernels move each outer block as a [rows][cols] matrix transposed through
// 32x32 tiles (channels-first blocks are [channels][spatial], channels-last ones
// [spatial][channels]); a block of 32 x 8 threads loads tile rows ty, ty + 8, ... at
// column tx and stores the transposed tile the same way. The arithmetic, shared with a CPU
// simulation of every thread (layout_map_test.cpp):
inline constexpr int kTransposeTile = 32, kTransposeRowsPerPass = 8;

struct TransposeShape {
  int64_t outer = 1, rows = 1, cols = 1;
  KC_HD int64_t tiles_c() const { return (cols + kTransposeTile - 1) / kTransposeTile; }
  KC_HD int64_t tiles() const { return tiles_c() * ((rows + kTransposeTile - 1) / kTransposeTile); }
};

KC_HD TransposeShape transpose_shape(const LayoutShape& s, bool to_last) {
  return to_last ? TransposeShape{s.outer, s.channels, s.spatial} : TransposeShape{s.outer, s.spatial, s.channels};
}

// Tile `tile`'s element (i, j) (row i, column j of the tile): its flat index in the
// block read (row-major [rows][cols]) and in the block written ([cols][rows]), -1 past
// the edge.
KC_HD int64_t tile_source(const TransposeShape& t, int64_t tile, int i, int j) {
  const int64_t r = tile / t.tiles_c() * kTransposeTile + i, c = tile % t.tiles_c() * kTransposeTile + j;
  return r < t.rows && c < t.cols ? r * t.cols + c : -1;
}
KC_HD int64_t tile_destination(const TransposeShape& t, int64_t tile, int i, int j) {
  const int64_t r = tile / t.tiles_c() * kTransposeTile + i, c = tile % t.tiles_c() * kTransposeTile + j;
  return r < t.rows && c < t.cols ? c * t.rows + r : -1;
}

}  // namespace kc::gpu
