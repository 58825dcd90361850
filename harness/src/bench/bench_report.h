// The document `kcheck bench --out` writes (docs/bench.md, "The JSON"): Google
// Benchmark's context and benchmarks array, with the ceilings as entries of their own,
// then the seeds' tables, the targets and the count of failures; and the text summary
// printed at the end of a run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/entry.h"
#include "bench/judge.h"
#include "bench/tables.h"
#include "kc/prepared_op.h"

namespace kc::bench {

struct BenchRunInfo {
  std::map<std::string, std::string> context;  // kc_commit, kc_cpu, kc_machine, ... (strings)
  int64_t num_cpus = 0;
  double mhz_per_cpu = 0.0;
  int64_t cache_bytes = 0;
  std::vector<std::pair<std::string, std::string>> backends;  // name, "" or why unavailable
};

// What a run reports: entries judged, ceilings, tables, targets.
struct BenchResults {
  std::vector<BenchEntry> entries;
  std::vector<Ceiling> ceilings;
  std::vector<Table> tables;
  std::vector<TargetResult> targets;
  int64_t failures() const;  // re-checks failed, fractions above their ceiling, errors
};

// The host's part of the context: CPU model, cores, clock, cache, date, host name.
BenchRunInfo host_run_info();

std::string bench_report_json(const BenchResults& r, const BenchRunInfo& info);
std::string bench_summary_text(const BenchResults& r, const BenchRunInfo& info);

}  // namespace kc::bench
