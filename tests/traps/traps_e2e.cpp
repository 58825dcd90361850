// The trap zoo end to end (ctest label `traps`), on the shipped corpus through kcheck and
// its JSON report, as a user would run it. kc_traps_e2e run KCHECK PLUGIN CASES DIR runs
// the corpus on the controls and every trap of trap_list.h, one report per backend under
// DIR (state, gradcheck and determinism only on the controls and the traps they must
// catch); `check DIR NAME` requires trap.NAME to fail by its expected check and
// diagnosis and pass its clean case (a control: pass everywhere); `score DIR` prints the
// mutation score and fails below 100%; `rerun KCHECK DIR NAME...` reruns reproducers.
// A trap the corpus misses means the corpus or a check lacks something: fix that, never
// the trap. The commands in full: docs/notes.md, section tests/traps/traps_e2e.cpp.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kc/result.h"
#include "run/report_reader.h"
#include "trap_list.h"
#include "trap_reports.h"
#include "traps_rerun.h"

namespace kc::traps {
namespace {

struct Expectation {
  std::string name, check, diagnosis, clean;
  std::string backend() const { return "trap." + name; }
};

const std::vector<Expectation>& expectations() {
  static const std::vector<Expectation> list = {
#define KC_TRAP_EXPECT(name, bug, check, diagnosis, clean) {#name, check, diagnosis, clean},
      KC_TRAPS(KC_TRAP_EXPECT)
#undef KC_TRAP_EXPECT
  };
  return list;
}

// `pattern` with `*` matching any text, found anywhere in `text`.
bool glob_in(const std::string& pattern, const std::string& text) {
  size_t pos = 0, start = 0;
  while (true) {
    const size_t star = pattern.find('*', start);
    const std::string part = pattern.substr(start, star == std::string::npos ? std::string::npos : star - start);
    const size_t at = text.find(part, pos);
    if (at == std::string::npos) return false;
    pos = at + part.size();
    if (star == std::string::npos) return true;
    start = star + 1;
  }
}

// The paths to give kcheck: CASES, or with files left out, CASES's entries with each
// folder that holds a left-out file replaced by its own entries, recursively.
std::vector<std::string> case_paths(const std::filesystem::path& root, const std::vector<std::filesystem::path>& out) {
  namespace fs = std::filesystem;
  auto holds = [&](const fs::path& dir) {
    for (const fs::path& f : out) {
      const fs::path rel = f.lexically_relative(dir);
      if (!rel.empty() && *rel.begin() != "..") return true;
    }
    return false;
  };
  if (!holds(root)) return {root.string()};
  std::vector<fs::path> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(root)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> paths;
  for (const fs::path& e : entries) {
    if (std::find(out.begin(), out.end(), e) != out.end()) continue;
    if (!fs::is_directory(e)) {
      // What kcheck's scan of a folder takes: case files, not the README beside them.
      if (e.extension() == ".yaml" || e.extension() == ".yml") paths.push_back(e.string());
      continue;
    }
    // A folder kcheck's scan leaves out (kc/case_io.h: kScanSkipMarker, the bench layer
    // set) stays out here too, where it would otherwise be named and so read.
    if (fs::exists(e / "KCHECK_SCAN_SKIP")) continue;
    for (std::string& p : case_paths(e, out)) paths.push_back(std::move(p));
  }
  return paths;
}

// The checks that cost the zoo most (state's shape variants, gradcheck's differences,
// determinism's reruns: about 70% of its time on the corpus) run on the controls and on
// the traps they must catch; the other traps are judged by every other check.
const std::vector<std::string> kCostly = {"state", "gradcheck", "determinism"};

bool runs_costly(const std::string& backend) {
  for (const Expectation& e : expectations()) {
    if (e.backend() == backend) return std::find(kCostly.begin(), kCostly.end(), e.check) != kCostly.end();
  }
  return true;  // a control
}

// One kcheck run of the corpus on `backends` (one report each under DIR), its output
// appended to DIR/run.log; kcheck's exit code, or -1.
int run_group(const std::string& kcheck, const std::string& plugin, const std::string& paths, const std::string& dir,
              const std::vector<std::string>& backends, const std::string& extra) {
  std::string names;
  for (const std::string& b : backends) names += (names.empty() ? "" : ",") + b;
  // One run for every backend: each case's worker checks it on all of them, the oracle's
  // part computed once; one report per backend (DIR/BACKEND/report.json).
  const std::string cmd = quoted(kcheck) + " run" + paths + " --plugin " + quoted(plugin) + " --backend " + names +
                          extra + " --jobs 2 --report " + quoted(report_path(dir, "{backend}")) + " >> " +
                          quoted(dir + "/run.log") + " 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_all(const std::string& kcheck, const std::string& plugin, const std::string& cases, const std::string& dir,
            const std::vector<std::string>& left_out) {
  std::filesystem::create_directories(dir);
  std::vector<std::filesystem::path> out;
  for (const std::string& f : left_out) {
    out.push_back(std::filesystem::path(cases) / f);
    if (!std::filesystem::is_regular_file(out.back())) {
      std::printf("left out: %s is no case file\n", out.back().string().c_str());
      return 1;
    }
  }
  std::string paths;
  for (const std::string& p : case_paths(cases, out)) paths += " " + quoted(p);
  std::vector<std::string> backends = {"trap.none", "trap.f32_accumulation", "trap.random_order_dw"};
  for (const Expectation& e : expectations()) backends.push_back(e.backend());
  std::vector<std::string> every_check, others;
  for (const std::string& b : backends) {
    // Never judge a trap by a stale report, nor keep a stale reproducer.
    std::filesystem::remove_all(run_folder(dir, b));
    (runs_costly(b) ? every_check : others).push_back(b);
  }
  std::filesystem::remove(dir + "/run.log");
  std::string skip;
  for (const std::string& c : kCostly) skip += (skip.empty() ? " --skip-checks " : ",") + c;
  const auto start = std::chrono::steady_clock::now();
  const int codes[] = {run_group(kcheck, plugin, paths, dir, every_check, ""),
                       run_group(kcheck, plugin, paths, dir, others, skip)};
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // kcheck exits 0 (all passed) or 1 (something failed); anything else is a broken run.
  int bad = 0, code = 0;
  for (int c : codes) {
    bad += c == 0 || c == 1 ? 0 : 1;
    code = std::max(code, c);
  }
  for (const std::string& b : backends) {
    if (std::filesystem::exists(report_path(dir, b))) continue;
    std::printf("%s: no report (see %s/run.log)\n", b.c_str(), dir.c_str());
    ++bad;
  }
  std::printf("%zu backends: exit %d, %.1f s\n", backends.size(), code, secs);
  return bad == 0 ? 0 : 1;
}

std::optional<ReadReport> load(const std::string& dir, const std::string& backend) {
  if (!std::filesystem::exists(report_path(dir, backend))) {
    std::printf("%s: no report at %s (run the traps.corpus test first)\n", backend.c_str(),
                report_path(dir, backend).c_str());
    return std::nullopt;
  }
  StatusOr<ReadReport> r = read_report(report_path(dir, backend));
  if (!r.ok()) {
    std::printf("%s: %s\n", backend.c_str(), r.status().message().c_str());
    return std::nullopt;
  }
  return std::move(*r);
}

// A disposition as the report spells it: PASSED, FAILED, ...
std::string spelled(Disposition d) { return std::string(disposition_name(d)); }

std::string where(const CaseResult& result) { return "'" + result.case_name + "' (" + result.source + ")"; }

// The results where the expected check FAILED with the expected diagnosis.
std::vector<const CaseResult*> catches(const ReadReport& report, const Expectation& e) {
  std::vector<const CaseResult*> hits;
  for (const CaseResult& r : report.results) {
    for (const CheckResult& c : r.checks) {
      if (c.name == e.check && c.disposition == Disposition::kFailed && glob_in(e.diagnosis, c.message)) {
        hits.push_back(&r);
        break;
      }
    }
  }
  return hits;
}

// What the harness did say about a trap: per check, how often it did not pass, and the
// first message.
void print_findings(const ReadReport& report) {
  std::map<std::string, std::pair<int, std::string>> seen;
  for (const CaseResult& r : report.results) {
    for (const CheckResult& c : r.checks) {
      const std::string d = spelled(c.disposition);
      if (d == "PASSED" || d == "SKIPPED") continue;
      auto& [count, first] = seen[c.name + " " + d];
      if (count++ == 0) first = where(r) + ": " + c.message.substr(0, 300);
    }
  }
  if (seen.empty()) std::printf("  the harness passed it everywhere\n");
  for (const auto& [key, v] : seen) std::printf("  %s on %d cases, e.g. %s\n", key.c_str(), v.first, v.second.c_str());
}

int check_control(const ReadReport& report, const std::string& backend) {
  int bad = 0;
  for (const CaseResult& r : report.results) {
    const std::string d = spelled(r.disposition);
    if (d == "PASSED" || d == "SKIPPED") continue;
    if (++bad <= 10) std::printf("  %s %s: %s\n", d.c_str(), where(r).c_str(), r.message.c_str());
  }
  std::printf("%s (a control, no bug): %zu results, %d not passed\n", backend.c_str(), report.results.size(), bad);
  if (bad > 0) print_findings(report);
  return bad == 0 ? 0 : 1;
}

int check_trap(const ReadReport& report, const Expectation& e) {
  const std::vector<const CaseResult*> hits = catches(report, e);
  int rc = 0;
  if (hits.empty()) {
    std::printf("%s: MISSED: no case has %s FAILED with \"%s\"\n", e.backend().c_str(), e.check.c_str(),
                e.diagnosis.c_str());
    print_findings(report);
    rc = 1;
  } else {
    std::printf("%s: CAUGHT by %s (\"%s\") on %zu cases, e.g. %s\n", e.backend().c_str(), e.check.c_str(),
                e.diagnosis.c_str(), hits.size(), where(*hits.front()).c_str());
    for (const CheckResult& c : hits.front()->checks) {
      if (c.name == e.check) std::printf("  %s: %s\n", e.check.c_str(), c.message.c_str());
    }
  }
  int clean = 0;
  for (const CaseResult& r : report.results) {
    if (r.case_name.find(e.clean) == std::string::npos) continue;
    ++clean;
    const bool passed = r.disposition == Disposition::kPassed;
    std::printf("  clean case %s: %s%s\n", where(r).c_str(), spelled(r.disposition).c_str(),
                passed ? " (the bug does not apply there)" : ": a trap must misbehave only where its bug applies");
    if (!passed) rc = 1;
  }
  if (clean == 0) {
    std::printf("  no corpus case is named like the clean case \"%s\"\n", e.clean.c_str());
    rc = 1;
  }
  return rc;
}

int check(const std::string& dir, const std::string& name) {
  const std::string backend = "trap." + name;
  const std::optional<ReadReport> report = load(dir, backend);
  if (!report) return 1;
  if (name == "none" || name == "f32_accumulation" || name == "random_order_dw") return check_control(*report, backend);
  for (const Expectation& e : expectations()) {
    if (e.name == name) return check_trap(*report, e);
  }
  std::printf("%s: not in tests/traps/trap_list.h\n", backend.c_str());
  return 1;
}

// How many corpus cases a trap fails, and which checks fail it on how many cases.
struct Margin {
  int cases = 0;
  std::map<std::string, int> by_check;
  std::string checks() const {
    std::string s;
    for (const auto& [name, n] : by_check) s += (s.empty() ? "" : ", ") + name + " " + std::to_string(n);
    return s;
  }
};

Margin margin(const ReadReport& report) {
  Margin m;
  for (const CaseResult& r : report.results) {
    if (r.disposition != Disposition::kFailed) continue;
    ++m.cases;
    for (const CheckResult& c : r.checks) {
      if (c.disposition == Disposition::kFailed) ++m.by_check[c.name];
    }
  }
  return m;
}

// Every trap is caught (the mutation score) and by at least kMinCases corpus cases, so
// that no bug class hangs on one case; the checks that catch it are printed beside it.
constexpr int kMinCases = 3;

int score(const std::string& dir) {
  int caught = 0, expected = 0, thin = 0;
  for (const Expectation& e : expectations()) {
    const std::optional<ReadReport> report = load(dir, e.backend());
    const Margin m = report ? margin(*report) : Margin{};
    const size_t as_expected = report ? catches(*report, e).size() : 0;
    caught += m.cases > 0;
    expected += as_expected > 0;
    thin += m.cases < kMinCases;
    std::printf("  %-34s %-7s %3d cases failed (%s)%s; %s: \"%s\" on %zu\n", e.backend().c_str(),
                m.cases ? "caught" : "MISSED", m.cases, m.checks().c_str(),
                m.cases > 0 && m.cases < kMinCases ? " THIN" : "", e.check.c_str(), e.diagnosis.c_str(), as_expected);
  }
  const size_t n = expectations().size();
  std::printf(
      "mutation score: %d/%zu traps caught (%.0f%%); %d/%zu by the expected check and diagnosis; %d caught by "
      "fewer than %d cases\n",
      caught, n, 100.0 * caught / static_cast<double>(n), expected, n, thin, kMinCases);
  return caught == static_cast<int>(n) && thin == 0 ? 0 : 1;
}

int usage() {
  std::fprintf(stderr,
               "usage: kc_traps_e2e run KCHECK PLUGIN CASES DIR [LEFT_OUT...] | check DIR NAME | score DIR | "
               "rerun KCHECK DIR NAME...\n");
  return 2;
}

}  // namespace
}  // namespace kc::traps

int main(int argc, char** argv) {
  using namespace kc::traps;
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() >= 5 && a[0] == "run") return run_all(a[1], a[2], a[3], a[4], {a.begin() + 5, a.end()});
  if (a.size() == 3 && a[0] == "check") return check(a[1], a[2]);
  if (a.size() == 2 && a[0] == "score") return score(a[1]);
  if (a.size() >= 4 && a[0] == "rerun") return rerun_reproducers(a[1], a[2], {a.begin() + 3, a.end()});
  return usage();
}
