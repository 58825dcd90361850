// Runs as history: ordered oldest first, labelled by commit, and grouped by machine, since
// absolute times compare only between runs of one machine (docs/dashboard.md, "Machines"). Within a
// machine, a chart is one case x op x mode x dtype and a series one backend.
#pragma once

#include <string>
#include <vector>

#include "bench_run.h"

namespace kc::bench {

// Runs ordered oldest first by their context date; runs without one keep their place
// after the dated ones.
void order_runs(std::vector<BenchRun>& runs);

// The run's label: the commit measured (12 digits), else the commit that recorded it,
// else its source.
std::string run_label(const BenchRun& run);

struct Machine {
  std::string key;                    // BenchRun::machine
  std::vector<const BenchRun*> runs;  // oldest first
};

// Machines in the order of their first run; the runs must outlive the result.
std::vector<Machine> group_by_machine(const std::vector<BenchRun>& runs);

// The chart keys of a machine's runs (sorted), the backends of one (sorted, its peer last)
// and a run's sample of it (nullptr when the run lacks it).
std::vector<std::string> chart_keys(const Machine& m);
std::vector<std::string> chart_backends(const Machine& m, const std::string& key);
const Sample* find_sample(const BenchRun& run, const std::string& key, const std::string& backend);

}  // namespace kc::bench
