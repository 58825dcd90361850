// A run against the previous run of the same machine: per entry in both, the change of
// its median time, flagged a regression when the slowdown exceeds the larger of the two
// runs' measured spreads, and never below kRegressionFloor (docs/dashboard.md says why).
#pragma once

#include <string>
#include <vector>

#include "bench_run.h"

namespace kc::bench {

// A slowdown under 5% is not flagged even when both spreads are tighter: consecutive
// runs differ by more than one run's quartiles (frequency, placement, a busy neighbour).
constexpr double kRegressionFloor = 0.05;

struct Change {
  std::string key, backend;
  double before = 0.0, after = 0.0;  // median seconds
  double change = 0.0;               // after / before - 1: above 0 is slower
  double threshold = 0.0;            // max(spread before, spread after, kRegressionFloor)
  bool regression = false;
};

double regression_threshold(const Sample& before, const Sample& after);

// Entries of `latest` that `previous` has too, in `latest`'s order. Runs of different
// machines are not compared (empty).
std::vector<Change> compare_runs(const BenchRun& previous, const BenchRun& latest);

}  // namespace kc::bench
