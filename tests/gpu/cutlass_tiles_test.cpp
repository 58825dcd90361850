// The CUTLASS engine's GEMM extents per pass and its tile rule (kc/gpu/cutlass_tiles.h):
// the large tile where its blocks fill the device, the small one below that.
#include <gtest/gtest.h>

#include "kc/gpu/cutlass_tiles.h"

namespace kc::gpu {
namespace {

ImplicitGemmProblem resnet_layer() {  // N 8, 56x56, C 64 -> K 128, 3x3, stride 2: 28x28 out
  ImplicitGemmProblem p;
  p.n = 8, p.c = 64, p.k = 128;
  p.in = {1, 56, 56}, p.filter = {1, 3, 3}, p.out = {1, 28, 28};
  return p;
}

TEST(CutlassTiles, EachPassIsItsOwnGemm) {
  const ImplicitGemmProblem p = resnet_layer();
  const GemmExtent f = implicit_gemm_extent(p, ConvPass::kFprop);
  EXPECT_EQ(f.m, 8 * 28 * 28);
  EXPECT_EQ(f.n, 128);
  EXPECT_EQ(f.k, 64 * 9);
  const GemmExtent d = implicit_gemm_extent(p, ConvPass::kDgrad);
  EXPECT_EQ(d.m, 8 * 56 * 56);
  EXPECT_EQ(d.n, 64);
  EXPECT_EQ(d.k, 128 * 9);
  const GemmExtent w = implicit_gemm_extent(p, ConvPass::kWgrad);
  EXPECT_EQ(w.m, 128);
  EXPECT_EQ(w.n, 64 * 9);
  EXPECT_EQ(w.k, 8 * 28 * 28);
  ImplicitGemmProblem grouped = p;
  grouped.groups = 2;
  EXPECT_EQ(implicit_gemm_extent(grouped, ConvPass::kFprop).k, 32 * 9);  // per group
}

TEST(CutlassTiles, TheLargeTileWhereItFillsTheDevice) {
  // 6272 x 128: 49 large blocks, under 132; 196 small ones.
  EXPECT_EQ(tile_for(implicit_gemm_extent(resnet_layer(), ConvPass::kFprop), TileMN{128, 128}), TileSize::kSmall);
  EXPECT_EQ(tile_for(GemmExtent{132 * 128, 128, 64}, {128, 128}), TileSize::kLarge);  // exactly one wave
  EXPECT_EQ(tile_for(GemmExtent{131 * 128 + 1, 128, 64}, {128, 128}),
            TileSize::kLarge);  // 132 blocks, the last partial
  EXPECT_EQ(tile_for(GemmExtent{131 * 128, 128, 64}, {128, 128}), TileSize::kSmall);
  EXPECT_EQ(tile_for(GemmExtent{6272, 128, 64}, {128, 128}, 40), TileSize::kLarge);  // a smaller device
  // wgrad's large tile is 64x256: 768 x 2688 is 12 x 11 = 132 of its blocks, 6 x 21 =
  // 126 of 128x128's.
  EXPECT_EQ(tile_for(GemmExtent{768, 2688, 1}, {64, 256}), TileSize::kLarge);
  EXPECT_EQ(tile_for(GemmExtent{768, 2688, 1}, {128, 128}), TileSize::kSmall);
}

}  // namespace
}  // namespace kc::gpu
