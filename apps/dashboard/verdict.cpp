#include "verdict.h"

#include <cstdio>

#include "history.h"
#include "regression.h"

namespace kc::bench {
namespace {

void judge_run(const BenchRun& run, std::vector<std::string>& reasons) {
  const std::string who = run_label(run) + " on " + run.machine + ": ";
  for (const RunTarget& t : run.targets) {
    if (!t.met) reasons.push_back(who + "target missed: " + t.what + " (" + t.detail + ", goal " + t.goal + ")");
  }
  for (const Sample& s : run.samples) {
    if (s.recheck_failed())
      reasons.push_back(who + "re-check failed: " + s.chart_key() + " " + s.backend + ": " + s.recheck);
  }
  if (run.failures > 0) reasons.push_back(who + std::to_string(run.failures) + " failure(s) recorded (kc_failures)");
}

}  // namespace

Verdict judge(const std::vector<BenchRun>& runs) {
  Verdict v;
  for (const Machine& m : group_by_machine(runs)) {
    const BenchRun& latest = *m.runs.back();
    judge_run(latest, v.reasons);
    if (m.runs.size() < 2) continue;
    for (const Change& c : compare_runs(*m.runs[m.runs.size() - 2], latest)) {
      if (!c.regression) continue;
      char line[512];
      std::snprintf(line, sizeof line, "%s on %s: regression: %s %s %+.1f%% (threshold %.1f%%)",
                    run_label(latest).c_str(), m.key.c_str(), c.key.c_str(), c.backend.c_str(), 100 * c.change,
                    100 * c.threshold);
      v.reasons.push_back(line);
    }
  }
  return v;
}

}  // namespace kc::bench
