// kcheck bench's options (usage in bench_command.cpp) and the end of its run.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/timing.h"
#include "cli.h"

namespace kc::cli {

struct BenchCliOptions {
  std::vector<std::string> paths, backends, plugins, python;
  std::string out;
  bench::TimingBudget budget;
  bool warm = true, cold = false;
  double timeout = 600.0;  // per case and backend
  bool in_process = false, ceilings = true;
};

// "" when the arguments are good, else what is wrong with them.
std::string parse_bench_options(const Args& args, BenchCliOptions& o);

// Judges the entries against the ceilings and peers, builds the tables and targets,
// prints the summary, writes --out; returns the exit code (invalid cases: 2).
int finish_bench(const BenchCliOptions& o, bench::BenchRunInfo& info, std::vector<bench::BenchEntry> entries,
                 std::vector<Ceiling> ceilings, int invalid);

}  // namespace kc::cli
