// kcheck: dispatch to a command.
#include <cstdio>
#include <string>

#include "backend/build_info.h"
#include "cli.h"
#include "core/check_table.h"
#include "core/validate.h"

namespace kc::cli {

constexpr const char* kUsage =
    "usage: kcheck <command> [args]\n"
    "  run PATH... [--backend a,b] [--plugin lib.so] [--report r.json] [--junit r.xml]\n"
    "              [--jobs N] [--timeout S] [--require NAME] [--in-process]\n"
    "      check every case file under the paths on each backend (--timeout: per case and\n"
    "      backend, default 60 s)\n"
    "  explain CASE      shapes, padding, FLOPs, bytes, memory, receptive field, erosion\n"
    "  gen [--op OP] [--count N] [--seed S] [--invalid] -o DIR\n"
    "      write N generated cases (OP: an op's name, or all: kcheck gen --help lists them), one per file\n"
    "  fuzz [--op OP] [--time S] [--count N] [--seed S] [--backend b] [--plugin lib.so]\n"
    "       [--save DIR] [--report r.json] [--shard i/n] [--jobs N] [--shrink-time S]\n"
    "       [--timeout S] [--max-failures N] [--in-process]\n"
    "      replay cases/regressions and DIR (default cases/regressions), then check generated cases on the backend\n"
    "      (default reference); shrink each kind of failure and save it under DIR\n"
    "  bench PATH... [--backend a,b] [--plugin lib.so] [--out bench.json] [--cache warm|cold|both]\n"
    "      time every op of every case on each backend beside the ceilings and peers measured in the\n"
    "      same run; re-check the timed outputs (kcheck bench --help)\n"
    "  backends [--plugin lib.so]   every backend: available, or unavailable (reason)\n"
    "  checks [--markdown]          every check: what it proves, where it applies\n"
    "  merge R1.json R2.json ... -o R.json [--junit R.xml]   the reports of a run's shards as one\n"
    "  --version         the version and the commit built from\n"
    "exit: 0 all passed or skipped, 1 something failed, 2 bad usage or invalid input (2 wins over 1)\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "kcheck: %s\n(see kcheck --help)\n", terminal_safe(message).c_str());
  return 2;
}

}  // namespace kc::cli

namespace {

int dispatch(const std::string& cmd, const kc::cli::Args& args) {
  using namespace kc::cli;
  const bool reads_cases = cmd == "run" || cmd == "explain" || cmd == "gen" || cmd == "fuzz" || cmd == "bench";
  if (reads_cases && !wants_help(args)) {
    if (kc::Status s = kc::limits_environment_problem(); !s.ok()) return usage_error(s.message());
    kc::freeze_limits_environment();  // read once here: workers and the code they run cannot change it
  }
  if (cmd == "run") return run_command(args);
  if (cmd == "explain") return explain_command(args);
  if (cmd == "backends") return backends_command(args);
  if (cmd == "checks") return checks_command(args);
  if (cmd == "merge") return merge_command(args);
  if (cmd == "gen") return gen_command(args);
  if (cmd == "fuzz") return fuzz_command(args);
  if (cmd == "bench") return bench_command(args);
  return usage_error("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kc::cli;
  guard_process();
  // --opt=value is --opt value wherever an option takes a value.
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2) {
      args.push_back(a.substr(0, eq));
      args.push_back(a.substr(eq + 1));
    } else {
      args.push_back(a);
    }
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::FILE* out = args.empty() ? stderr : stdout;
    std::fputs(kUsage, out);
    std::fprintf(out, "checks: %s (kcheck checks)\n",
                 kc::check_names([](const kc::CheckInfo&) { return true; }).c_str());
    return finished(args.empty() ? 2 : 0);
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "--version" || cmd == "version") {
    std::printf("kcheck %s (commit %s)\n", kc::version().c_str(), kc::source_commit().c_str());
    return finished(0);
  }
  const int code = dispatch(cmd, args);
  std::fflush(nullptr);
  return finished(code);
}
