// What a run checked, per backend considered: available or why not, and for those that
// ran, how many cases ran, passed and were skipped, and the seconds its results took. A run that checked nothing on a
// backend it was asked for is an error, never a green run (docs/cli.md, "run").
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kc/report.h"
#include "run/json_writer.h"

namespace kc {
namespace {

struct Tally {
  int ran = 0, passed = 0, skipped = 0;
  double seconds = 0.0;  // the results' own times: the backend's share of the run
  std::map<std::string, int> skip_reasons;
};

Tally tally_of(const std::vector<CaseResult>& results, const std::string& backend) {
  Tally t;
  for (const CaseResult& r : results) {
    if (r.backend != backend) continue;
    ++t.ran;
    t.seconds += r.seconds;
    t.passed += r.disposition == Disposition::kPassed;
    if (r.disposition == Disposition::kSkipped) {
      ++t.skipped;
      ++t.skip_reasons[r.message.empty() ? "(no reason given)" : r.message];
    }
  }
  return t;
}

// The most frequent skip reasons, "reason (n)", at most `shown` of them.
std::string top_reasons(const Tally& t, size_t shown) {
  const std::vector<std::pair<int, std::string>> sorted = most_frequent_first(t.skip_reasons);
  std::string s;
  for (size_t i = 0; i < sorted.size() && i < shown; ++i) {
    std::string why = sorted[i].second.size() > 120 ? sorted[i].second.substr(0, 117) + "..." : sorted[i].second;
    s += (i ? "; " : "") + why + " (" + std::to_string(sorted[i].first) + ")";
  }
  return s;
}

}  // namespace

std::vector<std::pair<int, std::string>> most_frequent_first(const std::map<std::string, int>& counts) {
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [what, n] : counts) sorted.emplace_back(n, what);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  return sorted;
}

std::string backend_state(const std::vector<CaseResult>& results, const BackendStatus& b) {
  if (!b.unavailable.empty()) return "unavailable: " + b.unavailable;
  if (!b.ran) return "available, not run (not named with --backend)";
  const Tally t = tally_of(results, b.name);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", t.seconds);
  return "available, " + std::to_string(t.ran) + " cases: " + std::to_string(t.passed) + " passed, " +
         std::to_string(t.skipped) + " skipped, " + secs;
}

// Every backend considered, one line each; more than three that were available and not
// named with --backend (a plugin's dozens) share one line of their names.
std::string backends_text(const std::vector<CaseResult>& results, const RunInfo& info) {
  if (info.backends.empty()) return {};
  std::vector<std::string> idle;
  for (const BackendStatus& b : info.backends) {
    if (b.unavailable.empty() && !b.ran) idle.push_back(one_line(b.name));
  }
  const bool collapse = idle.size() > 3;
  auto listed = [&](const BackendStatus& b) { return !collapse || !b.unavailable.empty() || b.ran; };
  size_t width = 12;
  for (const BackendStatus& b : info.backends) {
    if (listed(b)) width = std::max(width, std::min<size_t>(b.name.size(), 64));
  }
  std::string s = "backends considered:\n";
  for (const BackendStatus& b : info.backends) {
    if (!listed(b)) continue;
    const std::string name = one_line(b.name);
    s += "  " + name + std::string(width + 1 - std::min(width, name.size()), ' ') + backend_state(results, b) + "\n";
  }
  if (collapse) {
    s += "  " + std::to_string(idle.size()) + " more available, not run (not named with --backend):";
    for (size_t i = 0; i < idle.size(); ++i) s += (i ? ", " : " ") + idle[i];
    s += "\n";
  }
  return s;
}

std::string backends_json(const std::vector<CaseResult>& results, const RunInfo& info) {
  std::string s = "[";
  for (size_t i = 0; i < info.backends.size(); ++i) {
    const BackendStatus& b = info.backends[i];
    const Tally t = tally_of(results, b.name);
    s += std::string(i ? ",\n    " : "\n    ") + "{\"name\": " + json_string(b.name) +
         ", \"available\": " + (b.unavailable.empty() ? "true" : "false") +
         ", \"reason\": " + json_string(b.unavailable) + ", \"numerics\": " + json_string(b.numerics) +
         ", \"ran\": " + (b.ran ? "true" : "false") + ", \"cases\": " + std::to_string(t.ran) +
         ", \"passed\": " + std::to_string(t.passed) + ", \"skipped\": " + std::to_string(t.skipped) +
         ", \"seconds\": " + json_number(t.seconds) + ", \"top_skip_reasons\": " + json_string(top_reasons(t, 3)) + "}";
  }
  return s + (info.backends.empty() ? "]" : "\n  ]");
}

std::string nothing_checked(const std::vector<CaseResult>& results, const RunInfo& info) {
  std::string s;
  for (const BackendStatus& b : info.backends) {
    if (!b.ran || !b.must_check) continue;
    const Tally t = tally_of(results, b.name);
    if (t.ran == 0 || t.skipped < t.ran) continue;
    s += "nothing was checked on " + one_line(b.name) + ": " + std::to_string(t.skipped) + " of " +
         std::to_string(t.ran) + " SKIPPED, top reasons: " + top_reasons(t, 3) + "\n";
  }
  return s;
}

}  // namespace kc
