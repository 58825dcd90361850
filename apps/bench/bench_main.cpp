// kcheck-bench: Google Benchmark entries for kernelcheck, then the ratios each target
// is stated in, between entries of the same run. Google Benchmark flags pass through
// (e.g. --benchmark_out=r.json --benchmark_filter=Conv --benchmark_repetitions=5).
#include <benchmark/benchmark.h>

#include <cstdio>

#include "ratio_reporter.h"

namespace kc::bench {

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    auto it = r.counters.find("GFLOP/s");
    if (it == r.counters.end() || r.error_occurred) continue;
    const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
    if (r.run_type == Run::RT_Iteration || median) gflops_[r.run_name.function_name] = it->second.value;
  }
  ConsoleReporter::ReportRuns(runs);
}

double RatioReporter::gflops(const std::string& name) const {
  auto it = gflops_.find(name);
  return it == gflops_.end() ? 0.0 : it->second;
}

bool RatioReporter::print_ratio(const std::string& what, const std::string& a, const std::string& b,
                                double target) const {
  const double ga = gflops(a), gb = gflops(b);
  if (ga <= 0.0 || gb <= 0.0) return true;  // filtered out of this run
  const double r = ga / gb;
  std::printf("%-44s %8.3f  (%s %.2f / %s %.2f GFLOP/s; target >= %.2f) %s\n", what.c_str(), r,
              a.c_str(), ga, b.c_str(), gb, target, r >= target ? "MET" : "MISSED");
  return r >= target;
}

}  // namespace kc::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  kc::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nratios measured in this run:\n");
  reporter.print_ratio("reference conv fwd / Eigen GEMM (f64)", "BM_RefConvForward", "BM_EigenGemm", 0.40);
  benchmark::Shutdown();
  return 0;
}
