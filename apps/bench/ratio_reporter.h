// A console reporter that also remembers each benchmark's GFLOP/s counter, so that the
// bench can print ratios between entries measured in the same run (DESIGN section 8).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>

namespace kc::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  // GFLOP/s of the named benchmark (the median aggregate when repetitions ran), or 0.
  double gflops(const std::string& name) const;
  // Prints "name_a / name_b = r (target: >= t) PASS|MISS" and returns whether it passed.
  bool print_ratio(const std::string& what, const std::string& a, const std::string& b, double target) const;

 private:
  std::map<std::string, double> gflops_;
};

}  // namespace kc::bench
