// kcheck-bench: Google Benchmark entries for kernelcheck, then the targets (targets.h),
// each a ratio between entries of the same run. Google Benchmark flags pass through
// (e.g. --benchmark_out=r.json --benchmark_filter=Conv --benchmark_repetitions=5). The
// JSON's context carries kc_commit (the source tree's commit, or $KC_COMMIT), which
// kcheck-dashboard shows with the run.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "backend/build_info.h"
#include "ratio_reporter.h"

namespace kc::bench {

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.error_occurred) continue;
    const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
    if (r.run_type != Run::RT_Iteration && !median) continue;
    Entry& e = entries_[r.run_name.function_name];
    e.seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
    for (const auto& [name, c] : r.counters) e.counters[name] = c.value;
  }
  ConsoleReporter::ReportRuns(runs);
}

}  // namespace kc::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("kc_commit", kc::source_commit());
  if (const std::string gpu = kc::gpu_device_description(); !gpu.empty()) benchmark::AddCustomContext("kc_gpu", gpu);
  kc::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\ntargets, as ratios measured in this run:\n");
  for (const kc::bench::Target& t : kc::bench::targets()) {
    const auto m = kc::bench::evaluate(t, reporter.entries());
    if (!m) continue;  // an entry it needs was filtered out of this run
    std::printf("%-44s %10s  (%s; target %s) %s\n", std::string(t.what).c_str(),
                kc::bench::format_value(t, m->value).c_str(), m->detail.c_str(), m->goal.c_str(),
                m->met ? "MET" : "MISSED");
  }
  benchmark::Shutdown();
  return 0;
}
