// Host-side builders of the kernel shapes (conv_shape.h, pad_map.h, pool_shape.h) from
// the harness geometry, and the GEMM launch plan (gemm_plan.h). Callers guarantee the
// sizes fit in int (supports() refuses tensors of 2^31 elements or more).
#include <algorithm>

#include "kc/gpu/conv_shape.h"
#include "kc/gpu/gemm_plan.h"
#include "kc/gpu/pad_map.h"
#include "kc/gpu/pool_shape.h"
#include "kc/shape.h"

namespace kc::gpu {
namespace {

int narrow(int64_t v) { return static_cast<int>(v); }

// The per-dim window fields; with `prepadded` the input is the explicitly padded tensor.
void fill_window(const SpatialGeometry& g, bool prepadded, WindowShape& s) {
  const std::array<DimGeometry, 3> d = g.as_3d();
  for (int i = 0; i < 3; ++i) {
    s.in[i] = narrow(prepadded ? d[i].padded() : d[i].in);
    s.out[i] = narrow(d[i].out);
    s.kernel[i] = narrow(d[i].kernel);
    s.stride[i] = narrow(d[i].stride);
    s.dilation[i] = narrow(d[i].dilation);
    s.pad_lo[i] = prepadded ? 0 : narrow(d[i].pad_lo);
  }
}

}  // namespace

ConvShape conv_shape(const ConvGeometry& g, bool prepadded) {
  ConvShape s;
  s.batch = narrow(g.batch);
  s.in_channels = narrow(g.in_channels);
  s.out_channels = narrow(g.out_channels);
  s.groups = narrow(g.groups);
  fill_window(g.spatial, prepadded, s);
  return s;
}

PadShape pad_shape(const ConvGeometry& g) {
  PadShape p;
  p.planes = narrow(g.batch * g.in_channels);
  const std::array<DimGeometry, 3> d = g.spatial.as_3d();
  for (int i = 0; i < 3; ++i) {
    p.in[i] = narrow(d[i].in);
    p.lo[i] = narrow(d[i].pad_lo);
    p.padded[i] = narrow(d[i].padded());
  }
  switch (g.mode) {
    case PaddingMode::kReflect:
      p.mode = PadMode::kReflect;
      break;
    case PaddingMode::kReplicate:
      p.mode = PadMode::kReplicate;
      break;
    case PaddingMode::kCircular:
      p.mode = PadMode::kCircular;
      break;
    default:
      p.mode = PadMode::kZeros;
      break;
  }
  return p;
}

PoolShape pool_shape(const PoolGeometry& g) {
  PoolShape s;
  s.planes = narrow(g.batch * g.channels);
  fill_window(g.spatial, false, s);
  return s;
}

AvgPoolShape avgpool_shape(const AvgPoolGeometry& g) {
  AvgPoolShape s;
  s.planes = narrow(g.batch * g.channels);
  fill_window(g.spatial, false, s);
  const std::array<DimGeometry, 3> d = g.spatial.as_3d();
  for (int i = 0; i < 3; ++i) s.pad_hi[i] = narrow(d[i].pad_hi);
  s.count_include_pad = g.count_include_pad;
  s.divisor = g.divisor;
  return s;
}

int choose_splits(int64_t k, int64_t tiles_per_group, int64_t groups) {
  const int64_t blocks = std::max<int64_t>(1, tiles_per_group * groups);
  if (blocks >= kTargetBlocks) return 1;
  const int64_t wanted = (kTargetBlocks + blocks - 1) / blocks;
  const int64_t longest = std::max<int64_t>(1, k / kMinSplitK);  // each split >= kMinSplitK
  return static_cast<int>(std::clamp<int64_t>(std::min(wanted, longest), 1, kMaxSplits));
}

GemmPlan plan_gemm(int m, int n, int k, int groups, int splits) {
  GemmPlan p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.groups = groups;
  splits = std::max(1, splits);
  // Whole tiles per split; then the count that this length really needs, so that no
  // split is empty (an empty split would leave its partials unwritten).
  const int64_t tiles_k = ceil_div(k, kTileK);
  const int64_t tiles_per_split = std::max<int64_t>(1, ceil_div(tiles_k, splits));
  p.k_per_split = static_cast<int>(tiles_per_split * kTileK);
  p.splits = std::max(1, ceil_div(k, p.k_per_split));
  const int per_launch = std::max(1, std::min(groups, kMaxGridZ / p.splits));
  for (int base = 0; base < groups; base += per_launch) {
    GemmLaunch l;
    l.group_base = base;
    l.groups = std::min(per_launch, groups - base);
    l.grid_x = ceil_div(m, kTileM);
    l.grid_y = ceil_div(n, kTileN);
    l.grid_z = l.groups * p.splits;
    p.launches.push_back(l);
  }
  return p;
}

GemmPlan wgrad_plan(const ConvShape& s) {
  const BackwardWeightMap map{s};
  const int64_t tiles = static_cast<int64_t>(ceil_div(map.m_size(), kTileM)) * ceil_div(map.n_size(), kTileN);
  const int splits = choose_splits(map.k_size(), tiles, s.groups);
  return plan_gemm(map.m_size(), map.n_size(), map.k_size(), s.groups, splits);
}

int64_t wgrad_workspace_floats(const ConvShape& s, bool deterministic) {
  const GemmPlan p = wgrad_plan(s);
  const int64_t w = s.w_size();
  return deterministic && p.splits > 1 ? w * p.splits : w;
}

}  // namespace kc::gpu
