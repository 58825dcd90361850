// The kc_ fields that `kcheck bench --out` adds to Google Benchmark JSON (docs/bench.md):
// an entry's identity and counters, a ceiling entry, and the top-level tables and
// targets. Errors name the source and the field ("r.json: kc_targets[1].met: ...").
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "bench_run.h"
#include "kc/status.h"

namespace kc::bench {

// A timed entry (`where` is "r.json: benchmarks[3]"); its time is already in seconds.
StatusOr<Sample> read_sample(const YAML::Node& b, double seconds_per_unit, const std::string& where);

// A "ceiling/<device>/<name>" entry.
Ceiling read_ceiling(const YAML::Node& b, const std::string& name);

// kc_tables, kc_targets and kc_failures of the top level into `run`.
Status read_run_fields(const YAML::Node& root, BenchRun& run);

}  // namespace kc::bench
