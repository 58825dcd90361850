// Reading a report.json back (schema_version 2) for kcheck merge: the run's info and its
// results, as report_json wrote them.
#pragma once

#include <string>
#include <vector>

#include "kc/report.h"
#include "kc/status.h"

namespace kc {

struct ReadReport {
  std::string path;
  RunInfo info;  // command, started, seconds, extra (kc_commit, case_set, shard, ...), backends
  std::vector<CaseResult> results;
};

// Errors name the file and what is wrong with it.
StatusOr<ReadReport> read_report(const std::string& path);

}  // namespace kc
