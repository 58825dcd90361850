// Order statistics of a set of timed runs: the median the bench reports, the quartiles
// its spread is made of, and the extremes. Percentiles interpolate linearly between the
// sorted samples (type 7 of Hyndman and Fan, numpy's default), so a single sample is its
// own median and quartiles.
#pragma once

#include <cstdint>
#include <vector>

namespace kc::bench {

struct SampleStats {
  int64_t count = 0;
  double median = 0.0, p25 = 0.0, p75 = 0.0, min = 0.0, max = 0.0;
  // (p75 - p25) / median: how far apart typical runs are, relative to the median; 0 for
  // fewer than two samples or a zero median.
  double spread() const;
};

// The q-quantile (0 <= q <= 1) of sorted, non-empty samples.
double quantile(const std::vector<double>& sorted, double q);

// Every field; all zero for no samples.
SampleStats summarize(std::vector<double> samples);

}  // namespace kc::bench
