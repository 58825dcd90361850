// kcheck-dashboard: bench runs (kcheck bench --out JSON, older kcheck-bench JSON, and
// every committed version of them in git history), oldest first: a summary on stdout,
// with -o one self-contained HTML page, with --check a verdict in the exit status.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench_json.h"
#include "git_history.h"
#include "render.h"
#include "verdict.h"

namespace {

constexpr const char* kUsage =
    "usage: kcheck-dashboard [--git PATH]... [--git-dir DIR]... [-o OUT.html] [--check] [RUN.json]...\n"
    "  renders bench runs (kcheck bench --out, kcheck-bench --benchmark_out JSON), oldest first;\n"
    "  --git PATH     adds every committed version of PATH (e.g. reports/cpu/kcheck-bench.json)\n"
    "  --git-dir DIR  adds every committed version of every bench JSON under DIR (e.g. reports)\n"
    "  -o OUT.html    writes the HTML dashboard (docs/dashboard.md)\n"
    "  --check        exits 1 when the latest run of a machine misses a target, regresses against\n"
    "                 the previous run of that machine beyond its spread, or records failures\n"
    "exit: 0 shown (and passed with --check), 1 --check failed, 2 bad usage or unreadable input\n";

int usage_error(const std::string& why) {
  std::fprintf(stderr, "kcheck-dashboard: %s\n%s", why.c_str(), kUsage);
  return 2;
}

int input_error(const std::string& why) {
  std::fprintf(stderr, "kcheck-dashboard: %s\n", why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<kc::bench::BenchRun> git_runs, file_runs;
  std::string out_html;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--check") {
      check = true;
      continue;
    }
    if (arg == "--git" || arg == "--git-dir" || arg == "-o") {
      if (i + 1 >= argc) return usage_error(arg + " needs a path");
      const std::string value = argv[++i];
      if (arg == "-o") {
        out_html = value;
        continue;
      }
      auto history = arg == "--git" ? kc::bench::read_git_history(value) : kc::bench::read_git_reports(value);
      if (!history.ok()) return input_error(history.status().message());
      for (auto& r : *history) git_runs.push_back(std::move(r));
      continue;
    }
    if (arg.rfind("-", 0) == 0) return usage_error("unknown option '" + arg + "'");
    auto run = kc::bench::read_bench_json(arg);
    if (!run.ok()) return input_error(run.status().message());
    file_runs.push_back(std::move(*run));
  }
  if (git_runs.empty() && file_runs.empty()) return usage_error("no run given");
  // Committed history first, then the runs given: a run on the command line is the newest
  // of its machine even when its date is not (a rerun of an old commit, say).
  kc::bench::order_runs(git_runs);
  kc::bench::order_runs(file_runs);
  std::vector<kc::bench::BenchRun> runs = std::move(git_runs);
  for (auto& r : file_runs) runs.push_back(std::move(r));
  std::fputs(kc::bench::render_text(runs).c_str(), stdout);
  if (!out_html.empty()) {
    std::ofstream f(out_html, std::ios::binary);
    f << kc::bench::render_html(runs);
    if (!f.flush()) return input_error(out_html + ": cannot be written");
    std::printf("dashboard: %s\n", out_html.c_str());
  }
  return check && !kc::bench::judge(runs).ok() ? 1 : 0;
}
