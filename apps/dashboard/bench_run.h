// One bench run as the dashboard sees it, whichever app wrote it: the older kcheck-bench
// (Google Benchmark entries judged by targets.h) or `kcheck bench` (docs/bench.md: kc_
// fields per entry, ceilings, tables, targets, failures). Every timed entry of either is
// a Sample, so charts and regressions treat both alike. Counters absent are 0.
#pragma once

#include <string>
#include <vector>

#include "targets.h"

namespace kc::bench {

enum class RunFormat { kGoogleBenchmark, kKcheckBench };

struct Sample {
  std::string case_name;  // kc_case; for kcheck-bench runs the function name ("BM_EigenGemm")
  std::string op, mode, dtype, device;
  std::string backend;  // kc_backend; "kcheck-bench" for the older app
  std::string peer, ceiling, algorithm;
  std::string recheck;   // "passed", or the failure; "" where the run does not re-check
  double seconds = 0.0;  // median
  double spread = 0.0;   // (p75 - p25) / median; for kcheck-bench: stddev / median of repetitions
  double p25_seconds = 0.0, p75_seconds = 0.0;
  double gflops = 0.0, gbs = 0.0, fraction_of_ceiling = 0.0, ratio_to_peer = 0.0;
  double peak_bytes = 0.0, rss_peak_bytes = 0.0;

  // What a chart and a comparison are keyed on: the case, op, mode and dtype.
  std::string chart_key() const;
  bool recheck_failed() const { return !recheck.empty() && recheck != "passed"; }
};

struct Ceiling {
  std::string device, name, detail;
  double gflops = 0.0, gbs = 0.0;
};

struct RunError {
  std::string name, message;
};

struct RunTable {
  std::string key, title, note;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct RunTarget {
  std::string key, what, goal, detail;
  double value = 0.0;
  bool met = false;
};

struct BenchRun {
  RunFormat format = RunFormat::kGoogleBenchmark;
  std::string source;    // the file, or "<commit>:<path>" for a version from git history
  std::string commit;    // the commit measured (context kc_commit), or "" when not recorded
  std::string recorded;  // the git commit that recorded the file (history only), else ""
  std::string date;      // context date (ISO 8601)
  std::string host;      // context host_name
  std::string machine;   // kc_machine; else host, cpus and MHz: runs on one key compare absolute times
  std::string cpu, gpu, libraries;
  Entries entries;  // kcheck-bench: by function name, for targets.h
  std::vector<Sample> samples;
  std::vector<Ceiling> ceilings;
  std::vector<RunError> errors;
  std::vector<RunTable> tables;
  std::vector<RunTarget> targets;  // kc_targets; for kcheck-bench runs, targets.h judged on `entries`
  int failures = 0;                // kc_failures
};

}  // namespace kc::bench
