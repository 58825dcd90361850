// A console reporter that also remembers each benchmark's real time and counters, so
// that the bench can print its targets (targets.h), each a ratio between entries
// measured in the same run (docs/bench.md, "Targets").
#pragma once

#include <benchmark/benchmark.h>

#include "targets.h"

namespace kc::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  const Entries& entries() const { return entries_; }

 private:
  Entries entries_;
};

}  // namespace kc::bench
