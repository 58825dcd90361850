// kcheck fuzz: property-based checking of one backend (docs/cli.md, "fuzz and gen").
// Options, the seed line at the start, the summary (cases per second, failures by check)
// and the report; the loop itself is gen/fuzz_session.cpp.
//
// A case fails when it is FAILED, CRASHED, TIMEOUT or INVALID; MISTRUSTED is counted, not
// a failure. Exit 1 when anything failed, 2 for bad input or a failure that could not be
// saved (2 wins). --time is wall-clock from the start (replay included); without --time
// or --count, --time 60. Every decision beyond docs/cli.md, with its reason:
// docs/notes.md, section harness/src/cli/fuzz_command.cpp.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

#include "backend/python_modules.h"
#include "cli.h"
#include "gen/fuzz_session.h"
#include "kc/case_io.h"
#include "kc/plugin.h"
#include "kc/report.h"

namespace kc::cli {
namespace {

struct FuzzArgs {
  fuzz::Settings s;
  std::string report;
  bool seed_given = false, timeout_given = false;
};

// Numbers: seconds are positive decimals; counts and seeds unsigned integers.
std::string parse_value(const std::string& a, const std::string& v, FuzzArgs& o) {
  fuzz::Settings& s = o.s;
  constexpr uint64_t kMaxCount = 1ull << 40;
  if (a == "--op") {
    const auto ops = gen::parse_op_set(v);
    if (!ops) return "--op: expected " + gen::op_set_names() + ", got '" + v + "'";
    s.ops = *ops;
  } else if (a == "--time" || a == "--shrink-time" || a == "--timeout") {
    double& out = a == "--time" ? s.time_budget : a == "--shrink-time" ? s.shrink_time : s.timeout;
    if (std::string bad = parse_seconds_option(a, v, out); !bad.empty()) return bad;
    o.timeout_given = o.timeout_given || a == "--timeout";
  } else if (a == "--jobs") {
    return parse_jobs(v, s.jobs);  // as kcheck run's: refused past the limit, not cut to it
  } else if (a == "--count" || a == "--max-failures" || a == "--seed") {
    const auto n = parse_uint(v);
    if (!n || (a != "--seed" && *n > kMaxCount)) {
      return a + ": expected an integer from 0 to " +
             (a == "--seed" ? std::string("2^64 - 1") : std::to_string(kMaxCount)) + ", got '" + v + "'";
    }
    if (a == "--count") s.count = static_cast<int64_t>(*n);
    if (a == "--max-failures") s.max_failures = static_cast<int64_t>(*n);
    if (a == "--seed") s.seed = *n, o.seed_given = true;
  } else if (a == "--backend") {
    s.backend = v;
  } else if (a == "--plugin") {
    s.plugins.push_back(v);
  } else if (a == "--python") {
    s.python.push_back(v);
  } else if (a == "--save") {
    s.save_dir = v;
  } else if (a == "--report") {
    if (std::string bad = output_file_problem(a, v); !bad.empty()) return bad;
    o.report = v;
  } else if (a == "--shard") {
    return parse_shard_option(v, s.shard, s.shards);
  } else {
    return "fuzz: unknown option '" + a + "'";
  }
  return {};
}

std::string parse(const Args& args, FuzzArgs& o) {
  o.s.jobs = static_cast<int>(std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), kMaxJobs));
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--in-process") {
      o.s.in_process = true;
      continue;
    }
    if (args[i].rfind("--", 0) != 0) return "fuzz: unexpected argument '" + args[i] + "'";
    if (i + 1 >= args.size()) return args[i] + ": missing value";
    if (args[i] != "--plugin" && args[i] != "--python") {  // these may be given several times; the others once
      if (std::string twice = given_twice(seen, args[i]); !twice.empty()) return twice;
    }
    if (std::string err = parse_value(args[i], args[i + 1], o); !err.empty()) return err;
    ++i;
  }
  if (o.s.in_process && o.timeout_given) return in_process_timeout_problem();
  // Checked whether or not --save was given: a failure found must be saved where the
  // run says it is, not lost at the end of a long run.
  if (std::string bad = output_folder_problem("--save", "the folder failures are saved in", o.s.save_dir);
      !bad.empty()) {
    return bad;
  }
  if (o.s.time_budget <= 0 && o.s.count < 0) o.s.time_budget = 60;
  if (!o.seed_given) o.s.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  return {};
}

// Why --report would be written over a case file the run replays (under
// cases/regressions or the --save folder), or where it would be replayed as one (a
// .yaml or .yml there), or empty.
std::string report_clash(const FuzzArgs& o) {
  if (o.report.empty()) return {};
  std::vector<std::string> replayed;
  for (const std::string& dir : {std::string(fuzz::kRegressions), o.s.save_dir}) {
    if (is_case_file_name(o.report) && inside_folder(o.report, dir)) {
      return "--report: '" + o.report + "' has a case file's name under '" + dir +
             "', whose case files fuzz replays (and where it saves failures); give the report another name";
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    for (std::string& f : find_case_files(dir).files) replayed.push_back(std::move(f));
  }
  return outputs_clash({{"--report", o.report}}, replayed);
}

// Replayed case files that are invalid, each as file:line: reason.
void print_invalid_files(const std::vector<CaseResult>& invalid) {
  if (invalid.empty()) return;
  std::printf("  invalid replayed case files (fix or remove them):\n");
  for (const CaseResult& r : invalid) {
    const std::string file(source_file_of(r.source));
    const std::string line = r.message.rfind(file + ":", 0) == 0 ? r.message : r.source + ": " + r.message;
    std::printf("    %s\n", terminal_safe(file_on_one_line(line, file)).c_str());
  }
}

// The MISTRUSTED cases, a few by name with the check and its reason: inconclusive, not
// wrong, but not passed either (docs/checks.md, "Dispositions"), so each is named, not only counted.
void print_mistrusted(const std::vector<CaseResult>& results) {
  constexpr int kShown = 3;
  int n = 0;
  for (const CaseResult& r : results) {
    if (r.disposition != Disposition::kMistrusted) continue;
    if (n++ == 0) std::printf("  mistrusted (the data cannot judge these; not failures):\n");
    if (n > kShown) continue;
    std::string why;
    for (const CheckResult& c : r.checks) {
      if (c.disposition == Disposition::kMistrusted) {
        why = c.name + ": " + c.message;
        break;
      }
    }
    std::printf("    %s: %s\n", terminal_safe(r.case_name).c_str(), terminal_safe(why).c_str());
  }
  if (n > kShown) std::printf("    and %d more (--report lists every case)\n", n - kShown);
}

// How many generated cases the backend skipped and why; a warning above half; the draws
// steered away from features it only refused.
void print_skips(const fuzz::Outcome& out) {
  int64_t skipped = 0;
  std::map<std::string, int> why;
  for (size_t i = static_cast<size_t>(out.replayed); i < out.results.size(); ++i) {
    if (out.results[i].disposition != Disposition::kSkipped) continue;
    ++skipped;
    ++why[out.results[i].message];
  }
  const double rate = out.generated > 0 ? 100.0 * static_cast<double>(skipped) / static_cast<double>(out.generated) : 0;
  std::printf("  skip rate %.1f%% (%lld of %lld generated)", rate, static_cast<long long>(skipped),
              static_cast<long long>(out.generated));
  const std::vector<std::pair<int, std::string>> top = most_frequent_first(why);
  for (size_t i = 0; i < top.size() && i < 3; ++i) {
    std::printf("%s %d x %s", i == 0 ? ": top reasons:" : ";", top[i].first, terminal_safe(top[i].second).c_str());
  }
  std::printf("\n");
  if (out.steered_away > 0) {
    std::printf("  steered away from %lld draws the backend's supports() refused\n",
                static_cast<long long>(out.steered_away));
  }
  if (rate > 50.0) {
    std::printf(
        "  warning: the backend skipped most generated cases, so little was checked; narrow the generator "
        "(--op) to what it runs\n");
  }
}

void print_summary(const fuzz::Outcome& out, const fuzz::Settings& s) {
  const int64_t tried = out.replayed + out.generated;
  const double rate = out.check_seconds > 0 ? static_cast<double>(out.generated) / out.check_seconds : 0.0;
  std::map<std::string, int> counts = summary_counts(out.results);
  double shrinking = 0;
  for (const fuzz::Saved& sv : out.saved) shrinking += sv.seconds;
  std::printf(
      "\nkcheck fuzz: %lld cases (%lld replayed, %lld generated) in %.1f s: %.1f generated cases/s "
      "(%.1f s shrinking apart; seed %llu, shard %lld/%lld, backend %s)\n",
      static_cast<long long>(tried), static_cast<long long>(out.replayed), static_cast<long long>(out.generated),
      out.seconds, rate, shrinking, static_cast<unsigned long long>(s.seed), static_cast<long long>(s.shard),
      static_cast<long long>(s.shards), s.backend.c_str());
  std::printf("  passed %d, failed %d, mistrusted %d, skipped %d, invalid %d, crashed %d, timeout %d\n",
              counts["passed"], counts["failed"], counts["mistrusted"], counts["skipped"], counts["invalid"],
              counts["crashed"], counts["timeout"]);
  print_skips(out);
  if (!out.regressions_found) {
    std::printf("  (no %s folder under the current folder, so none of the corpus's regressions were replayed)\n",
                fuzz::kRegressions);
  }
  print_invalid_files(out.invalid_files);
  print_mistrusted(out.results);
  if (out.failed_checks.empty()) {
    std::printf("  no failures\n");
    return;
  }
  std::printf("  failing cases by check:");
  for (const auto& [check, n] : out.failed_checks) std::printf(" %s %d;", check.c_str(), n);
  std::printf("\n");
  for (const fuzz::Saved& sv : out.saved) {
    if (!sv.shrunk_written && !sv.original_written) {
      std::printf("  %s: NOT saved: %s and %s could not be written\n", sv.check.c_str(), sv.original.c_str(),
                  sv.shrunk.c_str());
      continue;
    }
    const std::string& file = sv.shrunk_written ? sv.shrunk : sv.original;
    std::printf("  %s: %s %s\n    reproduce: %s\n", sv.check.c_str(),
                sv.shrunk_written ? "shrunk" : "saved unshrunk (the shrunk case could not be written)", file.c_str(),
                fuzz::reproduce_command(s, file).c_str());
  }
}

// Whether every case the run said it saved was written.
bool all_saved(const fuzz::Outcome& out) {
  return std::all_of(out.saved.begin(), out.saved.end(),
                     [](const fuzz::Saved& sv) { return sv.original_written && sv.shrunk_written; });
}

RunInfo run_info(const Args& args, const fuzz::Outcome& out, const fuzz::Settings& s, const std::string& started) {
  RunInfo info;
  info.command = "kcheck fuzz";
  for (const std::string& a : args) info.command += " " + a;
  info.started = started;
  info.seconds = out.seconds;
  info.extra["seed"] = std::to_string(s.seed);
  info.extra["shard"] = std::to_string(s.shard) + "/" + std::to_string(s.shards);
  info.extra["op"] = std::string(gen::op_set_name(s.ops));
  add_build_info(info, {s.backend});
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.2f",
                out.check_seconds > 0 ? static_cast<double>(out.generated) / out.check_seconds : 0.0);
  info.extra["cases_per_second"] = rate;
  for (size_t i = 0; i < out.saved.size(); ++i) {
    if (out.saved[i].shrunk_written) info.extra["shrunk." + std::to_string(i)] = out.saved[i].shrunk;
  }
  return info;
}

}  // namespace

constexpr const char* kFuzzUsage =
    "usage: kcheck fuzz [--op OP] [--time S] [--count N] [--seed S]\n"
    "                   [--backend b] [--plugin lib.so]... [--python mod.py]... [--save DIR] [--report r.json] "
    "[--shard i/n|auto]\n"
    "                   [--jobs N] [--shrink-time S] [--timeout S] [--max-failures N] [--in-process]\n"
    "  replays cases/regressions and DIR (default cases/regressions), then checks generated cases on the backend "
    "(default\n"
    "  reference) until the budget is spent (--time S, --count N, or both: whichever comes first;\n"
    "  default --time 60); --shard i/n runs the cases k with k mod n = i (i from 0); the first failure of each check "
    "is\n"
    "  shrunk and saved under DIR with the command that reproduces it. --op all (default): the single\n"
    "  ops; --op stack: deep stacks (op: stack). Exit 0 nothing failed, 1 a case failed, crashed,\n"
    "  timed out or a generated one was invalid, 2 bad usage, an invalid replayed case file or a\n"
    "  failing case that could not be saved (2 wins over 1).\n";

int fuzz_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(kFuzzUsage, stdout);
    std::printf("OP: %s\n", gen::op_set_names().c_str());
    return 0;
  }
  FuzzArgs o;
  if (std::string err = parse(args, o); !err.empty()) return usage_error(err);
  if (std::string clash = report_clash(o); !clash.empty()) return usage_error(clash);
  Registry reg = builtin_registry();
  for (const std::string& p : o.s.plugins) {
    if (Status st = load_plugin(p, reg); !st.ok()) return usage_error(st.message());
  }
  for (const std::string& p : o.s.python) {
    if (Status st = load_python_module(p, reg, o.s.timeout); !st.ok()) return usage_error(st.message());
  }
  // A worker that imported a module serves many cases: the import is paid once per worker.
  if (!o.s.python.empty()) o.s.cases_per_worker = kDefaultCasesPerWorker;
  if (!reg.contains(o.s.backend))
    return usage_error("--backend: unknown backend '" + o.s.backend + "' (see kcheck backends)");
  if (Status st = backend_available(reg, o.s.backend); !st.ok()) {
    return usage_error("--backend " + o.s.backend + ": unavailable (" + st.message() + ")");
  }
  o.s.progress = isatty(STDERR_FILENO);
  const std::string started = now_utc();
  std::string budget = o.s.count >= 0 ? "count " + std::to_string(o.s.count) : "";
  if (o.s.time_budget > 0) {
    char t[32];
    std::snprintf(t, sizeof t, "%stime %g s", budget.empty() ? "" : ", ", o.s.time_budget);
    budget += t;
  }
  std::printf("kcheck fuzz: seed %llu (rerun with --seed %llu), op %s, backend %s, shard %lld/%lld, %s, %d jobs\n",
              static_cast<unsigned long long>(o.s.seed), static_cast<unsigned long long>(o.s.seed),
              std::string(gen::op_set_name(o.s.ops)).c_str(), o.s.backend.c_str(), static_cast<long long>(o.s.shard),
              static_cast<long long>(o.s.shards), budget.c_str(), o.s.jobs);
  std::fflush(stdout);
  const fuzz::Outcome out = fuzz::run(o.s, reg);
  print_summary(out, o.s);
  if (!o.report.empty()) {
    if (std::string why = write_text_file(o.report, report_json(out.results, run_info(args, out, o.s, started)));
        !why.empty()) {
      return usage_error("cannot write " + o.report + ": " + why);
    }
    std::printf("report: %s\n", terminal_safe(o.report).c_str());
  }
  if (!all_saved(out)) {
    std::fprintf(stderr, "kcheck fuzz: some failing cases could not be saved (named above)\n");
    return 2;
  }
  return !out.invalid_files.empty() ? 2 : out.failed ? 1 : 0;
}

}  // namespace kc::cli
