// The dashboard: every target (targets.h) judged on every run, oldest first, as text
// for a terminal and as one self-contained HTML page (a chart per target with its
// target line, a table of runs, and each entry's time and GFLOP/s per run).
#pragma once

#include <string>
#include <vector>

#include "bench_json.h"

namespace kc::bench {

// Runs ordered oldest first by their context date; runs without one keep their place
// after the dated ones.
void order_runs(std::vector<BenchRun>& runs);

std::string render_text(const std::vector<BenchRun>& runs);
std::string render_html(const std::vector<BenchRun>& runs);

// The run's label: the commit measured (12 digits), else the commit that recorded it,
// else its source.
std::string run_label(const BenchRun& run);

}  // namespace kc::bench
