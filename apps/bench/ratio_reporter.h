// A console reporter that also remembers each benchmark's counters and real time, so
// that the bench can print the ratios its targets are stated in, between entries
// measured in the same run (DESIGN section 8).
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
  // Prints "what r (a GFLOP/s / b GFLOP/s; target >= t) MET|MISSED"; true when met or
  // when either entry was filtered out of the run.
  bool print_ratio(const std::string& what, const std::string& a, const std::string& b, double target) const;
  // The same for real time: time(a) / time(b) <= target.
  bool print_time_ratio(const std::string& what, const std::string& a, const std::string& b, double target) const;
  // time(a) in seconds <= target.
  bool print_time(const std::string& what, const std::string& a, double target_seconds) const;
  // Counter `counter` of entry a <= counter `bound` of the same entry.
  bool print_within(const std::string& what, const std::string& a, const std::string& counter,
                    const std::string& bound) const;

 private:
  struct Entry {
    double seconds = 0.0;  // real time per iteration
    std::map<std::string, double> counters;
  };
  const Entry* entry(const std::string& name) const;
  std::map<std::string, Entry> entries_;
};

}  // namespace kc::bench
