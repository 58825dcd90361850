// kcheck-dashboard: kcheck-bench runs (Google Benchmark JSON files, and every committed
// version of a report file) judged by the bench's targets, oldest first: a table on
// stdout and, with -o, one self-contained HTML page.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "render.h"

namespace {

constexpr const char* kUsage =
    "usage: kcheck-dashboard [--git PATH]... [-o OUT.html] [RUN.json]...\n"
    "  judges each kcheck-bench run (--benchmark_out JSON) by the bench's targets, oldest first;\n"
    "  --git PATH adds every committed version of PATH (e.g. reports/cpu/kcheck-bench.json)\n"
    "  from the git history of the current directory; -o writes the HTML dashboard.\n"
    "exit: 0 shown, 2 bad usage or unreadable input\n";

int usage_error(const std::string& why) {
  std::fprintf(stderr, "kcheck-dashboard: %s\n%s", why.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<kc::bench::BenchRun> runs;
  std::string out_html;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--git" || arg == "-o") {
      if (i + 1 >= argc) return usage_error(arg + " needs a path");
      const std::string value = argv[++i];
      if (arg == "-o") {
        out_html = value;
        continue;
      }
      auto history = kc::bench::read_git_history(value);
      if (!history.ok()) return usage_error(history.status().message());
      for (auto& r : *history) runs.push_back(std::move(r));
      continue;
    }
    if (arg.rfind("-", 0) == 0) return usage_error("unknown option '" + arg + "'");
    auto run = kc::bench::read_bench_json(arg);
    if (!run.ok()) return usage_error(run.status().message());
    runs.push_back(std::move(*run));
  }
  if (runs.empty()) return usage_error("no run given");
  kc::bench::order_runs(runs);
  std::fputs(kc::bench::render_text(runs).c_str(), stdout);
  if (!out_html.empty()) {
    std::ofstream f(out_html, std::ios::binary);
    f << kc::bench::render_html(runs);
    if (!f.flush()) return usage_error(out_html + ": cannot be written");
    std::printf("dashboard: %s\n", out_html.c_str());
  }
  return 0;
}
