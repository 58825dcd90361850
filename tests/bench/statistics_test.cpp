// Order statistics of timed runs: quantiles as numpy's default (linear) gives them.
#include "bench/statistics.h"

#include <gtest/gtest.h>

namespace kc::bench {
namespace {

TEST(Statistics, QuartilesInterpolateLikeNumpy) {
  // numpy.percentile([4, 1, 3, 2], [25, 50, 75]) == [1.75, 2.5, 3.25]
  const SampleStats s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.p25, 1.75);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.p75, 3.25);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_DOUBLE_EQ(s.spread(), 1.5 / 2.5);
}

TEST(Statistics, OddCountMedianIsTheMiddleSample) {
  const SampleStats s = summarize({9.0, 1.0, 5.0, 7.0, 3.0});
  EXPECT_DOUBLE_EQ(s.median, 5.0);
  EXPECT_DOUBLE_EQ(s.p25, 3.0);
  EXPECT_DOUBLE_EQ(s.p75, 7.0);
}

TEST(Statistics, OneSampleHasNoSpread) {
  const SampleStats s = summarize({0.25});
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_DOUBLE_EQ(s.p25, 0.25);
  EXPECT_EQ(s.spread(), 0.0);
}

TEST(Statistics, NoSamplesGiveZeros) {
  const SampleStats s = summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.median, 0.0);
  EXPECT_EQ(s.spread(), 0.0);
}

TEST(Statistics, AnOutlierMovesTheMeanNotTheMedian) {
  const SampleStats s = summarize({1.0, 1.0, 1.0, 1.0, 100.0});
  EXPECT_DOUBLE_EQ(s.median, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
}

}  // namespace
}  // namespace kc::bench
