// The timing loop of `kcheck bench` (docs/bench.md, "Method"): runs prepared ops one at a
// time, rotating through the instances given (one: warm; several whose data exceed the
// cache: cold), until the time budget and the least count of runs are both reached or
// the most count is, or the time cap (max_seconds) has passed. Each run is timed alone: by the op's own clock when it
// has one (CUDA events), else by the host's steady clock around run() and synchronize().
#pragma once

#include <span>
#include <vector>

#include "bench/statistics.h"
#include "kc/prepared_op.h"

namespace kc::bench {

struct TimingBudget {
  double min_seconds = 0.2;  // of timed runs, summed
  int min_reps = 5;
  int max_reps = 1000;
  int warmup = 1;  // untimed runs of each instance first
  // A slow op stops here even short of min_reps (one run at least): a 50-layer step
  // through a library's per-call set-up would otherwise hold the run for minutes.
  double max_seconds = 5.0;
};

struct Timing {
  std::vector<double> samples;  // seconds per run, in run order
  SampleStats stats;
};

// ops must not be empty; the first failing run's error is returned.
StatusOr<Timing> time_runs(std::span<PreparedOp* const> ops, const TimingBudget& budget);

}  // namespace kc::bench
