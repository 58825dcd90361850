// The text dashboard: the runs, kcheck-bench's targets (targets.h) over its runs as before,
// then per machine the latest run against the previous one and the verdict of --check.
#include <optional>

#include "html_text.h"
#include "regression.h"
#include "render.h"
#include "verdict.h"

namespace kc::bench {
namespace {

// targets.h over the kcheck-bench runs: the newest verdict and every run's value.
std::string old_targets_text(const std::vector<BenchRun>& runs) {
  std::vector<const BenchRun*> old;
  for (const BenchRun& r : runs) {
    if (r.format == RunFormat::kGoogleBenchmark) old.push_back(&r);
  }
  if (old.empty()) return "";
  std::string out = "kcheck-bench targets:\n";
  for (const Target& t : targets()) {
    std::string goal, history, newest = "not measured";
    for (const BenchRun* r : old) {
      const std::optional<Measure> v = evaluate(t, r->entries);
      history += v ? format(" %s%s", format_value(t, v->value).c_str(), v->met ? "" : "!") : std::string(" -");
      if (!v) continue;
      goal = v->goal;
      newest = v->met ? "MET" : "MISSED";
    }
    out += format("%-44s target %-36s newest %-12s history:%s\n", std::string(t.what).c_str(),
                  goal.empty() ? "-" : goal.c_str(), newest.c_str(), history.c_str());
  }
  return out + "(! marks a missed target; - a run without the entries it needs)\n\n";
}

std::string machine_text(const Machine& m, size_t index) {
  const BenchRun& latest = *m.runs.back();
  std::string out =
      format("machine %zu: %s (%zu run%s)\n", index, m.key.c_str(), m.runs.size(), m.runs.size() == 1 ? "" : "s");
  if (m.runs.size() > 1) {
    const BenchRun& prev = *m.runs[m.runs.size() - 2];
    const auto changes = compare_runs(prev, latest);
    size_t flagged = 0;
    for (const Change& c : changes) flagged += c.regression ? 1 : 0;
    out += format("  latest %s vs previous %s: %zu entries compared, %zu regression%s\n", run_label(latest).c_str(),
                  run_label(prev).c_str(), changes.size(), flagged, flagged == 1 ? "" : "s");
    for (const Change& c : changes) {
      if (c.regression)
        out += format("    REGRESSION %s %s: %.4g ms -> %.4g ms (%+.1f%%, threshold %.1f%%)\n", c.key.c_str(),
                      c.backend.c_str(), 1e3 * c.before, 1e3 * c.after, 100 * c.change, 100 * c.threshold);
    }
  }
  if (latest.format == RunFormat::kKcheckBench) {
    for (const RunTarget& t : latest.targets)
      out += format("  target %-40s %10.4g  goal %-12s %s\n", t.what.c_str(), t.value, t.goal.c_str(),
                    t.met ? "MET" : "MISSED");
  }
  for (const RunError& e : latest.errors) out += format("  error %s: %s\n", e.name.c_str(), e.message.c_str());
  return out;
}

}  // namespace

std::string render_text(const std::vector<BenchRun>& runs) {
  std::string out = format("%zu run%s, oldest first:\n", runs.size(), runs.size() == 1 ? "" : "s");
  for (size_t i = 0; i < runs.size(); ++i) {
    out += format("  [%zu] %s  %s  %s\n", i + 1, run_label(runs[i]).c_str(), runs[i].date.c_str(),
                  runs[i].machine.c_str());
  }
  out += "\n" + old_targets_text(runs);
  const auto machines = group_by_machine(runs);
  for (size_t i = 0; i < machines.size(); ++i) out += machine_text(machines[i], i + 1);
  const Verdict v = judge(runs);
  out += v.ok() ? "check: ok (latest run of every machine)\n" : "check: FAILED\n";
  for (const std::string& r : v.reasons) out += "  " + r + "\n";
  return out;
}

}  // namespace kc::bench
