// The channels-first <-> channels-last maps of the CUTLASS engine (kc/gpu/layout_map.h):
// NCHW -> NHWC and KCRS -> KRSC put each element where the other layout's strides say,
// every element exactly once, and the two maps are each other's inverse.
#include <gtest/gtest.h>

#include <vector>

#include "kc/gpu/layout_map.h"

namespace kc::gpu {
namespace {

TEST(LayoutMap, NchwToNhwcFollowsTheStrides) {
  const int64_t n = 2, c = 3, h = 4, w = 5;
  const LayoutShape s{n, c, h * w};
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          const int64_t nchw = ((in * c + ic) * h + ih) * w + iw;
          const int64_t nhwc = ((in * h + ih) * w + iw) * c + ic;
          ASSERT_EQ(channels_last_index(s, nchw), nhwc) << in << ic << ih << iw;
          ASSERT_EQ(channels_first_index(s, nhwc), nchw);
        }
}

TEST(LayoutMap, EveryElementLandsOnceAndTheMapsInvertEachOther) {
  for (const LayoutShape s :
       {LayoutShape{1, 1, 1}, LayoutShape{3, 8, 9}, LayoutShape{64, 3, 49}, LayoutShape{7, 5, 1}}) {
    std::vector<int> hit(static_cast<size_t>(s.size()), 0);
    for (int64_t i = 0; i < s.size(); ++i) {
      const int64_t j = channels_last_index(s, i);
      ASSERT_GE(j, 0);
      ASSERT_LT(j, s.size());
      ++hit[static_cast<size_t>(j)];
      ASSERT_EQ(channels_first_index(s, j), i);
    }
    for (int h : hit) ASSERT_EQ(h, 1);
  }
}

TEST(LayoutMap, FiltersAreBlocksOfOneFilterEach) {                            // KCRS -> KRSC: K blocks of C x R*S
  const LayoutShape w{4, 2, 9};                                               // K 4, C/G 2, 3x3
  EXPECT_EQ(channels_last_index(w, 1 * 18 + 1 * 9 + 4), 1 * 18 + 4 * 2 + 1);  // k 1, c 1, tap 4
}

// The copy kernels' tiled transpose, every thread of every block simulated on the CPU
// with the kernel's own arithmetic (tile_source, tile_destination): every read and write
// stays inside its block, each element is written once, where the index maps say, across
// partial tiles, both ways.
std::vector<int64_t> simulate_transpose(const LayoutShape& s, bool to_last, const std::vector<int64_t>& src) {
  const TransposeShape t = transpose_shape(s, to_last);
  std::vector<int64_t> dst(src.size(), -1);
  std::vector<int> writes(src.size(), 0);
  const int64_t block = t.rows * t.cols;
  int64_t tile[kTransposeTile][kTransposeTile + 1];
  for (int64_t o = 0; o < t.outer; ++o) {
    const int64_t base = o * t.rows * t.cols;
    for (int64_t k = 0; k < t.tiles(); ++k) {
      for (int ty = 0; ty < kTransposeRowsPerPass; ++ty)
        for (int tx = 0; tx < kTransposeTile; ++tx)
          for (int i = ty; i < kTransposeTile; i += kTransposeRowsPerPass) {
            const int64_t from = tile_source(t, k, i, tx);
            EXPECT_LT(from, block);
            if (from >= 0 && from < block) tile[i][tx] = src[static_cast<size_t>(base + from)];
          }
      for (int ty = 0; ty < kTransposeRowsPerPass; ++ty)
        for (int tx = 0; tx < kTransposeTile; ++tx)
          for (int i = ty; i < kTransposeTile; i += kTransposeRowsPerPass) {
            const int64_t to = tile_destination(t, k, tx, i);
            EXPECT_LT(to, block);
            if (to < 0 || to >= block) continue;
            dst[static_cast<size_t>(base + to)] = tile[tx][i];
            ++writes[static_cast<size_t>(base + to)];
          }
    }
  }
  for (int w : writes) EXPECT_EQ(w, 1);
  return dst;
}

TEST(LayoutMap, TheTiledTransposePutsEveryElementWhereTheMapsSay) {
  for (const LayoutShape s : {LayoutShape{1, 1, 1}, LayoutShape{2, 37, 70}, LayoutShape{3, 64, 3136 / 16},
                              LayoutShape{1, 33, 9}, LayoutShape{5, 3, 32}}) {
    std::vector<int64_t> first(static_cast<size_t>(s.size()));
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
    const std::vector<int64_t> last = simulate_transpose(s, true, first);
    for (int64_t i = 0; i < s.size(); ++i) ASSERT_EQ(last[static_cast<size_t>(channels_last_index(s, i))], i);
    EXPECT_EQ(simulate_transpose(s, false, last), first);
  }
}

}  // namespace
}  // namespace kc::gpu
