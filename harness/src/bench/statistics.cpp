#include "bench/statistics.h"

#include <algorithm>
#include <cmath>

namespace kc::bench {

double SampleStats::spread() const {
  if (count < 2 || median <= 0.0) return 0.0;
  return (p75 - p25) / median;
}

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

SampleStats summarize(std::vector<double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int64_t>(samples.size());
  s.median = quantile(samples, 0.5);
  s.p25 = quantile(samples, 0.25);
  s.p75 = quantile(samples, 0.75);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

}  // namespace kc::bench
