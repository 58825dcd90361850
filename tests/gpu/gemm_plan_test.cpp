// Launch geometry of the implicit-GEMM kernels (kc/gpu/gemm_plan.h): every (group, m,
// n, k) is covered by exactly one block and split, splits are whole tiles and never
// empty, grids respect CUDA's limits, and the split count depends on the shape alone.
#include <gtest/gtest.h>

#include <vector>

#include "kc/gpu/gemm_plan.h"
#include "kc/shape.h"
#include "support/case_builders.h"

namespace kc {
namespace {

using namespace gpu;

void check_plan(int m, int n, int k, int groups, int splits) {
  const GemmPlan p = plan_gemm(m, n, k, groups, splits);
  SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " groups " << groups << " splits " << splits);
  ASSERT_GE(p.splits, 1);
  ASSERT_LE(p.splits, std::max(1, splits));
  ASSERT_EQ(p.k_per_split % kTileK, 0);
  // Splits tile [0, k) exactly, none empty.
  std::vector<int> covered(static_cast<size_t>(k), 0);
  for (int s = 0; s < p.splits; ++s) {
    const int begin = s * p.k_per_split, end = std::min(k, begin + p.k_per_split);
    ASSERT_LT(begin, end) << "split " << s << " is empty";
    for (int i = begin; i < end; ++i) ++covered[static_cast<size_t>(i)];
  }
  for (int c : covered) ASSERT_EQ(c, 1);
  // Launches cover every group once, within the grid limits; tiles cover m and n.
  std::vector<int> groups_seen(static_cast<size_t>(groups), 0);
  for (const GemmLaunch& l : p.launches) {
    ASSERT_LE(l.grid_z, kMaxGridZ);
    ASSERT_LE(l.grid_y, kMaxGridY);
    ASSERT_EQ(l.grid_z, l.groups * p.splits);
    ASSERT_GE(l.grid_x * kTileM, m);
    ASSERT_LT((l.grid_x - 1) * kTileM, m);
    ASSERT_GE(l.grid_y * kTileN, n);
    for (int g = l.group_base; g < l.group_base + l.groups; ++g) ++groups_seen[static_cast<size_t>(g)];
  }
  for (int c : groups_seen) ASSERT_EQ(c, 1);
  // Planning again with the planned count changes nothing (the kernel and the reduction
  // of backward-weight must agree on it).
  const GemmPlan again = plan_gemm(m, n, k, groups, p.splits);
  EXPECT_EQ(again.splits, p.splits);
  EXPECT_EQ(again.k_per_split, p.k_per_split);
}

TEST(GpuGemmPlan, CoversEverythingOnce) {
  for (int k : {1, 31, 32, 33, 100, 1000, 4097}) {
    for (int splits : {1, 2, 3, 7, 64}) check_plan(65, 1, k, 3, splits);
  }
  check_plan(1, 300, 9, 1, 1);
  check_plan(4096, 64, 576, 1, 1);
}

TEST(GpuGemmPlan, ManyGroupsAreLaunchedInChunks) {
  check_plan(10, 1, 9, 70000, 1);  // depthwise with more groups than grid.z allows
  check_plan(1, 9, 50000, 2000, 40);
}

TEST(GpuGemmPlan, SplitChoice) {
  EXPECT_EQ(choose_splits(1 << 20, kTargetBlocks, 1), 1);  // enough blocks already
  EXPECT_EQ(choose_splits(100, 1, 1), 1);                  // too short to split
  const int s = choose_splits(1 << 20, 1, 1);
  EXPECT_EQ(s, kMaxSplits);
  EXPECT_EQ(choose_splits(8 * kMinSplitK, 1, 1), 8);  // each split at least kMinSplitK
  EXPECT_EQ(choose_splits(1 << 20, 1, 1), choose_splits(1 << 20, 1, 1));
}

TEST(GpuGemmPlan, BackwardWeightWorkspace) {
  test::ConvSpec spec{8, 16, 32, 1, {64, 64}, {3, 3}, {1, 1}, {1, 1}, test::pad_kind(PadKind::kSame)};
  auto g = conv_geometry(test::conv_case(spec));
  ASSERT_TRUE(g.ok());
  const ConvShape s = conv_shape(*g, false);
  const GemmPlan p = wgrad_plan(s);
  EXPECT_EQ(p.m, 32);
  EXPECT_EQ(p.n, 16 * 9);
  EXPECT_EQ(p.k, 8 * 64 * 64);
  EXPECT_GT(p.splits, 1);  // 1 x 3 tiles: the long reduction is split
  EXPECT_EQ(wgrad_workspace_floats(s, true), int64_t{s.w_size()} * p.splits);
  EXPECT_EQ(wgrad_workspace_floats(s, false), s.w_size());
}

}  // namespace
}  // namespace kc
