// kc_traps_e2e rerun (traps_rerun.h): each failure reproducer of a trap run, run again as
// its first line says, must end as its header says, with kcheck's exit 1, and write the
// same case as its own reproducer: one that reruns to another verdict, or not at all,
// shows its reader nothing. The reruns' reports and logs are in DIR/reruns/BACKEND/.
#include "traps_rerun.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kc/result.h"
#include "run/report_reader.h"
#include "trap_reports.h"

namespace kc::traps {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What a reproducer says of itself: the arguments of its `# rerun: kcheck` line, the
// disposition its header states, and its case (the last line).
struct Reproducer {
  std::string arguments, disposition, case_line;
};

// The reproducer in `path`, or the reason it cannot be rerun.
std::string read_reproducer(const std::string& path, Reproducer& r) {
  const std::vector<std::string> lines = lines_of(read_text(path));
  const std::string rerun = "# rerun: kcheck ", header = "# kcheck reproducer: ";
  if (lines.size() < 3 || lines[0].rfind(rerun, 0) != 0) return "its first line is no `" + rerun + "...`";
  if (lines[1].rfind(header, 0) != 0) return "its second line is no `" + header + "...`";
  const size_t at = lines[1].rfind("): ");  // the name and source before it may hold anything
  if (at == std::string::npos) return "its header states no disposition";
  r.arguments = lines[0].substr(rerun.size() - 1);
  r.disposition = lines[1].substr(at + 3);
  r.case_line = lines.back();
  return {};
}

// What a rerun gave: kcheck's exit status, its one result's disposition and the case
// line of the reproducer it wrote, or why there is none.
struct Verdict {
  int exit_code = -1;
  std::string disposition, case_line, problem;
};

Verdict read_verdict(const std::string& report_file, int exit_code) {
  Verdict v;
  v.exit_code = exit_code;
  const StatusOr<ReadReport> report = read_report(report_file);
  if (!report.ok()) {
    v.problem = "no report (" + report.status().message() + ")";
    return v;
  }
  const std::vector<CaseResult>& results = report->results;
  if (results.size() != 1) {
    v.problem = std::to_string(results.size()) + " results, not the one case";
    return v;
  }
  v.disposition = std::string(disposition_name(results[0].disposition));
  std::string again;
  for (const auto& [key, value] : results[0].fields) {
    if (key == "reproducer_file") again = value;
  }
  const std::vector<std::string> lines = again.empty() ? std::vector<std::string>() : lines_of(read_text(again));
  if (!lines.empty()) v.case_line = lines.back();
  return v;
}

// Runs the reproducer's first line with bash, `kcheck` being KCHECK, writing its report
// (and so its own reproducer) into `out`.
Verdict rerun_one(const std::string& kcheck, const Reproducer& r, const std::string& out) {
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string report = out + "/report.json";
  const std::string script = quoted(kcheck) + r.arguments + " --report " + quoted(report);
  const std::string cmd = "bash -c " + quoted(script) + " > " + quoted(out + "/run.log") + " 2>&1";
  const int status = std::system(cmd.c_str());
  return read_verdict(report, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

bool is_failure(const std::string& d) {
  return d == "FAILED" || d == "MISTRUSTED" || d == "CRASHED" || d == "TIMEOUT" || d == "XPASS";
}

// Why the rerun of `r` does not give the verdict its header states, or empty.
std::string mismatch(const Reproducer& r, const Verdict& v) {
  if (!v.problem.empty()) return v.problem;
  if (v.disposition != r.disposition) return "rerun " + v.disposition + ", the header says " + r.disposition;
  const int want = is_failure(r.disposition) ? 1 : r.disposition == "INVALID" ? 2 : 0;
  if (v.exit_code != want) return "exit " + std::to_string(v.exit_code) + ", not " + std::to_string(want);
  if (v.case_line != r.case_line) return "its own reproducer holds another case: " + v.case_line.substr(0, 300);
  return {};
}

// Reruns every reproducer of one backend's run; how many did not give their verdict.
int rerun_backend(const std::string& kcheck, const std::string& dir, const std::string& backend) {
  const fs::path failures = fs::path(run_folder(dir, backend)) / "failures";
  std::vector<fs::path> files;
  if (fs::is_directory(failures)) {
    for (const fs::directory_entry& e : fs::directory_iterator(failures)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::printf("%s: no reproducers in %s (run the traps.corpus test first)\n", backend.c_str(),
                failures.string().c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  size_t bad = 0;
  for (const fs::path& f : files) {
    Reproducer r;
    std::string why = read_reproducer(f.string(), r), see;
    if (why.empty()) {
      const std::string out = dir + "/reruns/" + backend + "/" + f.stem().string();
      why = mismatch(r, rerun_one(kcheck, r, out));
      see = " (see " + out + ")";
    }
    if (!why.empty() && ++bad <= 10) std::printf("  %s: %s%s\n", f.string().c_str(), why.c_str(), see.c_str());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-34s %3zu reproducers rerun in %5.1f s, %zu with the verdict of their header\n", backend.c_str(),
              files.size(), secs, files.size() - bad);
  return static_cast<int>(bad);
}

}  // namespace

int rerun_reproducers(const std::string& kcheck, const std::string& dir, const std::vector<std::string>& names) {
  int bad = 0;
  for (const std::string& name : names) bad += rerun_backend(kcheck, dir, "trap." + name) > 0;
  return bad == 0 ? 0 : 1;
}

}  // namespace kc::traps
