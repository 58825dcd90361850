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

}  // namespace
}  // namespace kc::gpu
