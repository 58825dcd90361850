// What `kcheck-dashboard --check` judges: the latest run of each machine. It fails on a
// missed target, a regression against the machine's previous run, an entry whose timed
// outputs failed the re-check, or a run that counts failures (kc_failures).
#pragma once

#include <string>
#include <vector>

#include "bench_run.h"

namespace kc::bench {

struct Verdict {
  std::vector<std::string> reasons;  // one line each, naming the machine and the run
  bool ok() const { return reasons.empty(); }
};

// `runs` ordered oldest first (order_runs).
Verdict judge(const std::vector<BenchRun>& runs);

}  // namespace kc::bench
