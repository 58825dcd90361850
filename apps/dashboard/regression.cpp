#include "regression.h"

#include <algorithm>

#include "history.h"

namespace kc::bench {

double regression_threshold(const Sample& before, const Sample& after) {
  return std::max({before.spread, after.spread, kRegressionFloor});
}

std::vector<Change> compare_runs(const BenchRun& previous, const BenchRun& latest) {
  std::vector<Change> out;
  if (previous.machine != latest.machine) return out;
  for (const Sample& s : latest.samples) {
    const Sample* p = find_sample(previous, s.chart_key(), s.backend);
    if (p == nullptr || !(p->seconds > 0.0) || !(s.seconds > 0.0)) continue;
    Change c{s.chart_key(), s.backend, p->seconds, s.seconds};
    c.change = s.seconds / p->seconds - 1.0;
    c.threshold = regression_threshold(*p, s);
    c.regression = c.change > c.threshold;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kc::bench
