// Reading a bench run from its JSON: Google Benchmark's format as the older kcheck-bench
// writes it (--benchmark_out), or with the kc_ fields of `kcheck bench --out`
// (docs/bench.md). The format is told by the fields, not by the file name.
#pragma once

#include <string>
#include <string_view>

#include "bench_run.h"
#include "kc/status.h"

namespace kc::bench {

// Errors name `source` and the field: "r.json: benchmarks[2].real_time: not a number".
StatusOr<BenchRun> parse_bench_json(std::string_view text, const std::string& source);
StatusOr<BenchRun> read_bench_json(const std::string& path);

// Whether `text` is meant as bench JSON at all (an object with a "benchmarks" list), so
// that a folder of reports can skip the other JSON it holds.
bool is_bench_json(std::string_view text);

}  // namespace kc::bench
