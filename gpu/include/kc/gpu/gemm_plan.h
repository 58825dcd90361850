// Launch geometry of the implicit-GEMM kernels, host-side and unit-tested: tile sizes,
// the grid, the split of a long reduction (backward-weight) and the workspace it needs.
//
// Grid: x = M tiles (up to 2^31 - 1), y = N tiles, z = groups * splits, in launches of
// at most kMaxGridZ groups at a time (group_base says where a launch starts). Split s
// of K covers [s*k_per_split, min(K, (s+1)*k_per_split)); k_per_split is a multiple of
// kTileK, so every k is in exactly one split and no split is empty.
// The split count depends on the problem's shape only (never on the device), so the
// deterministic reduction sums the same partials in the same order on every run.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/gpu/conv_shape.h"

namespace kc::gpu {

inline constexpr int kTileM = 64;
inline constexpr int kTileN = 64;
inline constexpr int kTileK = 32;
inline constexpr int kGemmThreads = 128;  // 4 warps, each a 32x32 sub-tile
inline constexpr int kMaxGridY = 65535;
inline constexpr int kMaxGridZ = 65535;

struct GemmLaunch {
  int group_base = 0;  // first group of this launch
  int groups = 1;      // groups in this launch
  int grid_x = 1;      // tiles along M
  int grid_y = 1;      // tiles along N
  int grid_z = 1;      // groups * splits
};

struct GemmPlan {
  int m = 0, n = 0, k = 0;  // per-group GEMM sizes
  int groups = 1;
  int splits = 1;       // split-K factor (1 but for backward-weight)
  int k_per_split = 0;  // multiple of kTileK
  std::vector<GemmLaunch> launches;
};

inline int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Split count for a reduction of length k over `tiles` output tiles per group: enough
// blocks to fill a large GPU (kTargetBlocks, a constant, not the device's SM count),
// each split at least kMinSplitK long, and at most kMaxSplits partials.
inline constexpr int kTargetBlocks = 512;
inline constexpr int kMinSplitK = 8 * kTileK;
inline constexpr int kMaxSplits = 64;
int choose_splits(int64_t k, int64_t tiles_per_group, int64_t groups);

// The plan for per-group sizes m x n x k over `groups`, k split `splits` ways (>= 1).
GemmPlan plan_gemm(int m, int n, int k, int groups, int splits);

// The backward-weight plan of a convolution: K = batch x output positions, split by
// choose_splits over the dw tiles of all groups.
GemmPlan wgrad_plan(const ConvShape& s);

// Workspace for backward-weight, in floats: partials [splits][w_size] when
// deterministic (reduced in split order), else one f32 accumulator of w_size that the
// splits add into atomically.
int64_t wgrad_workspace_floats(const ConvShape& s, bool deterministic);

}  // namespace kc::gpu
