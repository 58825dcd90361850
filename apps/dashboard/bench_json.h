// Reading Google Benchmark JSON (kcheck-bench --benchmark_out=F --benchmark_out_format=json)
// into the entries its targets are judged on (targets.h), and the runs recorded in git
// history (each committed version of one report file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kc/status.h"
#include "targets.h"

namespace kc::bench {

struct BenchRun {
  std::string source;    // the file, or "<commit>:<path>" for a version from git history
  std::string commit;    // the commit measured (context kc_commit), or "" when not recorded
  std::string recorded;  // the git commit that recorded the file (history only), else ""
  std::string date;      // context date (ISO 8601)
  std::string host;      // context host_name
  Entries entries;       // by function name: the median aggregate when repetitions ran
};

// Errors name `source` and the field: "r.json: benchmarks[2].real_time: not a number".
StatusOr<BenchRun> parse_bench_json(std::string_view text, const std::string& source);
StatusOr<BenchRun> read_bench_json(const std::string& path);

// Every committed version of `path` (relative to the current directory, inside a git
// checkout), oldest first, each with `recorded` set to its commit. NotFound when git
// knows no version of it.
StatusOr<std::vector<BenchRun>> read_git_history(const std::string& path);

}  // namespace kc::bench
