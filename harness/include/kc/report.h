// Run reports: the JSON of docs/cli.md ("Reports") (summary counts with lower-case keys, one
// result per case x backend with its checks), JUnit XML for CI, the console summary,
// and a one-case YAML reproducer per failure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kc/case_io.h"
#include "kc/result.h"

namespace kc {

// The version of report.json's layout; a reader refuses a version it does not know.
// 2: schema_version, host, backends, per-result fields, xfail/xpass counts.
inline constexpr int kReportSchemaVersion = 2;

// A backend the run considered: every backend of the registry, whether it ran or not.
struct BackendStatus {
  std::string name;
  std::string unavailable;  // the reason; empty when available
  bool ran = false;         // its cases were run
  bool must_check = false;  // named with --backend, or a plugin's: a run that checks nothing on it is an error
  std::string numerics;     // its declared numerics (kc/numerics.h: describe), when available
};

struct RunInfo {
  std::string command;  // the command line
  std::string started;  // ISO 8601 UTC
  double seconds = 0.0;
  std::map<std::string, std::string> extra;  // e.g. device, driver, commit
  std::vector<BackendStatus> backends;       // every backend considered (run/census.cpp)
};

std::map<std::string, int> summary_counts(const std::vector<CaseResult>& results);
// The files a run's folder scans passed over (kc/case_io.h), into info.extra: passed_over
// (the total) and passed_over_KEY for each reason, zeros included, so that the report
// carries them and the summary, of a run or of merged shards, says them.
void set_passed_over(RunInfo& info, const PassedOver& counts);

std::string report_json(const std::vector<CaseResult>& results, const RunInfo& info);
std::string junit_xml(const std::vector<CaseResult>& results, const RunInfo& info);
// The table printed at the end of a run: one block per case that did not pass (check,
// diagnosis, worst coordinates, reproducer; a waived failure, XFAIL, one line naming its
// waiver unless `verbose`), counts per backend and disposition, and the most frequent
// reasons cases were skipped on each backend.
std::string summary_text(const std::vector<CaseResult>& results, const RunInfo& info, bool verbose = false);
// A one-case YAML file for a failed result: comment lines with the diagnosis and the
// worst coordinates (each made one line by one_line, so that no name or message can end
// a comment), then the reproducer. Empty when the result has no reproducer.
std::string failure_yaml(const CaseResult& r);

// A name or path for one line of output: each control character written as \xNN (a
// newline as \x0a, a carriage return as \x0d), so that a file name holding one cannot
// start a line that looks like another result.
std::string one_line(std::string_view text);
// `text` with every occurrence of `file` written by one_line(): a message that names a
// file holding a control character keeps the name on its line. `text` as is when `file`
// has none.
std::string file_on_one_line(std::string text, std::string_view file);

// (count, text) pairs, the most frequent first, ties in text order (skip reasons).
std::vector<std::pair<int, std::string>> most_frequent_first(const std::map<std::string, int>& counts);
// One backend's line: "available, N cases: P passed, S skipped", "available, not run"
// or "unavailable: reason".
std::string backend_state(const std::vector<CaseResult>& results, const BackendStatus& b);
// Every backend considered, one line each: "available" with how many of its cases ran,
// passed and were skipped, or "unavailable: reason" (run/census.cpp).
std::string backends_text(const std::vector<CaseResult>& results, const RunInfo& info);
// The backends of info.backends as JSON objects (name, available, reason, ran, counts).
std::string backends_json(const std::vector<CaseResult>& results, const RunInfo& info);
// Why the run checked nothing on a backend that must check something (must_check): one
// line per such backend, "nothing was checked on NAME: N of N SKIPPED, top reasons: ...";
// empty when every such backend checked at least one case.
std::string nothing_checked(const std::vector<CaseResult>& results, const RunInfo& info);

// The process exit code for a run: 2 if any case was invalid (invalid input wins, so
// that a gate on exit 2 sees it); else 1 if anything failed, was mistrusted, crashed or
// timed out; else 0.
int exit_code(const std::vector<CaseResult>& results);

}  // namespace kc
