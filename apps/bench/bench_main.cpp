// kcheck-bench: Google Benchmark entries for kernelcheck, then the targets (targets.h),
// each a ratio between entries of the same run. Google Benchmark flags pass through
// (e.g. --benchmark_out=r.json --benchmark_filter=Conv --benchmark_repetitions=5). The
// JSON's context carries kc_commit (the source tree's commit, or $KC_COMMIT), which
// kcheck-dashboard shows with the run.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

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

namespace {

// The commit of the source tree this binary was built from ("+dirty" with uncommitted
// changes), $KC_COMMIT when set, or "unknown" (no git, or not a checkout).
std::string source_commit() {
  if (const char* env = std::getenv("KC_COMMIT"); env != nullptr && *env != '\0') return env;
  const std::string git = "git -C '" KC_SOURCE_DIR "' ";
  auto first_line = [](const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen((command + " 2>/dev/null").c_str(), "r"), pclose);
    if (!p) return std::string();
    std::array<char, 128> buf{};
    std::string line = std::fgets(buf.data(), buf.size(), p.get()) ? buf.data() : "";
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
  };
  const std::string commit = first_line(git + "rev-parse HEAD");
  if (commit.empty()) return "unknown";
  return first_line(git + "status --porcelain --untracked-files=no").empty() ? commit : commit + "+dirty";
}

}  // namespace
}  // namespace kc::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("kc_commit", kc::bench::source_commit());
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
