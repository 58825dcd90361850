// The charts of one machine: per case x op (x mode x dtype), one line per backend across
// the machine's runs, with the op's peer (dashed) and its ceiling (dotted) on the same
// axes. GFLOP/s where every point has it, else the median time; the ceiling is the
// roofline of the op (GFLOP/s / fraction_of_ceiling, or time x fraction_of_ceiling).
#pragma once

#include <string>

#include "history.h"
#include "svg_chart.h"

namespace kc::bench {

ChartSpec machine_chart(const Machine& m, const std::string& key);

// Every chart of the machine as HTML, in one grid.
std::string machine_charts_html(const Machine& m);

}  // namespace kc::bench
