// The text `kcheck bench` prints at the end of a run: backends, ceilings, one line per
// entry, the seeds' tables, the targets, and what failed.
#include <cmath>
#include <cstdio>

#include "bench/bench_report.h"

namespace kc::bench {
namespace {

std::string fmt(const char* f, auto... v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, v...);
  return buf;
}

std::string or_dash(double v, const char* f) { return std::isnan(v) || v <= 0 ? "-" : fmt(f, v); }

std::string entry_line(const BenchEntry& e) {
  // The case's name gives way, never the backend, op and mode.
  const std::string tail = "/" + e.backend + "/" + e.op + "/" + e.mode;
  const size_t room = tail.size() >= 66 ? 4 : 70 - tail.size();
  const std::string name = (e.case_name.size() > room ? e.case_name.substr(0, room - 3) + "..." : e.case_name) + tail;
  if (!e.skipped.empty()) return fmt("  %-70s  SKIPPED %s\n", name.c_str(), e.skipped.c_str());
  if (!e.error.empty()) return fmt("  %-70s  ERROR %s\n", name.c_str(), e.error.c_str());
  const double s = e.stats.median;
  return fmt("  %-70s %10.3f %6.1f%% %9s %8s %7s %7s %9.2f  %s\n", name.c_str(), s * 1e3, 100 * e.stats.spread(),
             or_dash(e.flops / s / 1e9, "%.2f").c_str(), or_dash(e.bytes / s / 1e9, "%.2f").c_str(),
             or_dash(e.fraction, "%.3f").c_str(), or_dash(e.ratio_to_peer, "%.2f").c_str(),
             static_cast<double>(e.peak_bytes()) / (1 << 20), e.recheck.c_str());
}

}  // namespace

std::string bench_summary_text(const BenchResults& r, const BenchRunInfo& info) {
  std::string out = "\nbackends:\n";
  for (const auto& [name, why] : info.backends)
    out += fmt("  %-16s %s\n", name.c_str(), why.empty() ? "available" : ("unavailable: " + why).c_str());
  out += "ceilings (measured in this run):\n";
  for (const Ceiling& c : r.ceilings)
    out += fmt("  %-4s %-22s %10.2f %s  (%s)\n", c.device.c_str(), c.name.c_str(), c.per_second / 1e9,
               c.flops ? "GFLOP/s" : "GB/s", c.detail.c_str());
  out += fmt("\n  %-70s %10s %7s %9s %8s %7s %7s %9s  %s\n", "case/backend/op/mode", "median ms", "spread", "GFLOP/s",
             "GB/s", "of ceil", "vs peer", "peak MiB", "re-check");
  for (const BenchEntry& e : r.entries) out += entry_line(e);
  out += "\n";
  for (const Table& t : r.tables) out += table_text(t) + "\n";
  out += "targets, as ratios measured in this run:\n";
  for (const TargetResult& t : r.targets)
    out += fmt("  %-52s %10.3f  (%s; target %s) %s\n", t.what.c_str(), t.value, t.detail.c_str(), t.goal.c_str(),
               t.met ? "MET" : "MISSED");
  out += fmt("\n%zu entries, %lld failed (re-check, above a ceiling, error)\n", r.entries.size(),
             static_cast<long long>(r.failures()));
  return out;
}

}  // namespace kc::bench
