// The dashboard's two renderings of the runs (ordered oldest first, history.h): text for a
// terminal, and one self-contained HTML page (inline SVG and CSS, nothing fetched) that
// docs/dashboard.md explains.
#pragma once

#include <string>
#include <vector>

#include "bench_run.h"
#include "history.h"

namespace kc::bench {

std::string render_text(const std::vector<BenchRun>& runs);
std::string render_html(const std::vector<BenchRun>& runs);

}  // namespace kc::bench
