// Bench runs recorded in git history: every committed version of one report file, or of
// every bench JSON under a folder (other JSON there, such as corpus reports, is skipped).
// Each run has `recorded` set to the commit that wrote that version.
#pragma once

#include <string>
#include <vector>

#include "bench_run.h"
#include "kc/status.h"

namespace kc::bench {

// Every committed version of `path` (relative to the current directory, inside a git
// checkout), oldest first. NotFound when git knows no version of it.
StatusOr<std::vector<BenchRun>> read_git_history(const std::string& path);

// Every committed version of every *.json under `dir` that is bench JSON, oldest first
// per file. NotFound when `dir` is not in a git checkout or holds no bench JSON.
StatusOr<std::vector<BenchRun>> read_git_reports(const std::string& dir);

}  // namespace kc::bench
