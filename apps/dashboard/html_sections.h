// The parts of the HTML dashboard apart from the charts: the verdict banner, the runs of a
// machine, its latest run against the previous one, its targets with their history, the
// tables a run carries (kc_tables), and the ratios of every machine side by side.
#pragma once

#include <string>
#include <vector>

#include "history.h"
#include "verdict.h"

namespace kc::bench {

std::string verdict_html(const Verdict& v, const std::vector<Machine>& machines);
std::string runs_html(const Machine& m);
std::string changes_html(const Machine& m);
std::string targets_html(const Machine& m);
std::string run_tables_html(const BenchRun& run);
std::string ratios_across_machines_html(const std::vector<Machine>& machines);

}  // namespace kc::bench
