// kcheck run: every case file under the paths, on each backend, each case x backend in
// a worker process; progress on a terminal, a summary, reports, failure reproducers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>

#include "backend/python_modules.h"
#include "checks/oracle_memo.h"
#include "cli.h"
#include "core/check_table.h"
#include "kc/case_io.h"
#include "kc/plugin.h"
#include "kc/registry.h"
#include "kc/report.h"
#include "kc/runner.h"
#include "progress.h"
#include "run/fast_failure.h"
#include "run/isolate.h"
#include "run/waivers.h"
#include "run_inputs.h"

namespace kc::cli {
namespace {

struct RunOptions {
  std::vector<std::string> paths, backends, plugins, python, waivers;  // --waivers may be given several times
  std::string report, junit, require;
  std::vector<std::string> skip_checks;  // --skip-checks: left out of every case
  int jobs = 1;
  double timeout = kDefaultTimeoutSeconds;
  bool in_process = false, timeout_given = false;
  bool verbose = false;           // a waived failure's diagnosis in the summary too
  bool quiet = false;             // no progress on stderr
  bool allow_empty = false;       // a named or plugin backend may check nothing
  int64_t shard = 0, shards = 1;  // --shard i/n
  int max_failures = 0;           // 0: no limit
  int max_crashes = 3;            // crashed or timed-out results in a row on a backend; 0: no limit
  // Cases a worker serves before a fresh one replaces it (run/worker.h).
  int cases_per_worker = kDefaultCasesPerWorker;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) r.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return r;
}

// Keeps the first of each name, in order.
void drop_repeats(std::vector<std::string>& names) {
  std::set<std::string> seen;
  std::erase_if(names, [&](const std::string& n) { return !seen.insert(n).second; });
}

// The options that take one value (--plugin may be given several times).
const std::set<std::string> kSingleValued = {"--backend",     "--report",          "--junit",        "--require",
                                             "--jobs",        "--timeout",         "--max-failures", "--max-crashes",
                                             "--skip-checks", "--cases-per-worker"};

// --backend's value: names separated by commas, none empty; a name given twice runs once.
std::string parse_backends(const std::string& v, std::vector<std::string>& backends) {
  backends = split(v);
  if (backends.empty() || std::count(v.begin(), v.end(), ',') + 1 != static_cast<long>(backends.size())) {
    return "--backend: expected names separated by commas, got '" + v + "'";
  }
  drop_repeats(backends);
  return {};
}

// What the options say together, once all are read: an error message or empty.
std::string check_together(const RunOptions& o) {
  if (o.in_process && o.timeout_given) return in_process_timeout_problem();
  if (!o.report.empty() && !per_backend_report(o.report)) {  // per backend: once the backends are known
    const std::string folder = failures_folder(o.report);
    if (std::string bad = output_folder_problem("--report", "the failures folder next to the report", folder);
        !bad.empty()) {
      return bad;
    }
  }
  return o.paths.empty() ? "run: give at least one case file or folder" : "";
}

// Parses the options; returns an error message or empty.
std::string parse(const Args& args, RunOptions& o) {
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (kSingleValued.count(a) != 0) {
      if (std::string twice = given_twice(seen, a, a == "--backend" ? "several backends: --backend a,b" : "");
          !twice.empty()) {
        return twice;
      }
    }
    if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
      return "run: unknown option '" + a + "' (options start with --; give a file named so as ./" + a + ")";
    } else if (a.rfind("--", 0) != 0) {
      o.paths.push_back(a);
    } else if (a == "--backend" && value(v)) {
      if (std::string bad = parse_backends(v, o.backends); !bad.empty()) return bad;
    } else if (a == "--plugin" && value(v)) {
      o.plugins.push_back(v);
    } else if (a == "--python" && value(v)) {
      o.python.push_back(v);
    } else if ((a == "--report" || a == "--junit") && value(v)) {
      if (a == "--junit" && per_backend_report(v)) return "--junit: {backend} is for --report only";
      if (std::string bad = per_backend_report(v) ? "" : output_file_problem(a, v); !bad.empty()) return bad;
      (a == "--report" ? o.report : o.junit) = v;
    } else if (a == "--require" && value(o.require)) {
      if (o.require.empty()) return "--require: expected a backend name, got ''";
    } else if (a == "--jobs" && value(v)) {
      if (std::string bad = parse_jobs(v, o.jobs); !bad.empty()) return bad;
    } else if (a == "--timeout" && value(v)) {
      if (std::string bad = parse_seconds_option(a, v, o.timeout); !bad.empty()) return bad;
      o.timeout_given = true;
    } else if (a == "--in-process") {
      o.in_process = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--shard" && value(v)) {
      if (std::string bad = parse_shard_option(v, o.shard, o.shards); !bad.empty()) return bad;
    } else if (a == "--waivers" && value(v)) {
      if (v.empty()) return "--waivers: expected a file, got ''";
      o.waivers.push_back(v);
    } else if (a == "--skip-checks" && value(v)) {
      if (split(v).empty()) return "--skip-checks: expected check names separated by commas, got '" + v + "'";
      for (const std::string& name : split(v)) {
        if (find_check(name) == nullptr) return "--skip-checks: no check is named '" + name + "' (see kcheck checks)";
        o.skip_checks.push_back(name);
      }
      drop_repeats(o.skip_checks);
    } else if (a == "--allow-empty") {
      o.allow_empty = true;
    } else if ((a == "--max-failures" || a == "--max-crashes") && value(v)) {
      int& limit = a == "--max-failures" ? o.max_failures : o.max_crashes;
      if (std::string bad = parse_count_option(a, v, limit); !bad.empty()) return bad;
    } else if (a == "--cases-per-worker" && value(v)) {
      if (std::string bad = parse_count_option(a, v, o.cases_per_worker); !bad.empty()) return bad;
      if (o.cases_per_worker == 0) return "--cases-per-worker: expected 1 or more, got 0";
    } else {
      return "run: unknown option or missing value: '" + a + "'";
    }
  }
  return check_together(o);
}

// Why the failures folder of a report would be written over an input or the JUnit file.
std::string failures_clash(const RunOptions& o, const std::string& failures, const std::vector<std::string>& inputs) {
  for (const std::string& in : inputs) {
    if (!inside_folder(in, failures)) continue;
    return "--report: the failures folder '" + failures + "' next to the report holds the input case file '" + in +
           "', which a failure reproducer may overwrite; write the report in another folder";
  }
  if (!o.junit.empty() && (same_file(o.junit, failures) || inside_folder(o.junit, failures))) {
    return "--junit: '" + o.junit + "' is or is in '" + failures +
           "', the failures folder of --report where failure reproducers are written; give another path";
  }
  return {};
}

// Why the report, the JUnit file or the failure reproducers would be written over an
// input (a case file, or the NAME.expect beside one) or over one another, or empty.
// Asked before the run: a case file overwritten by a report is lost.
std::string output_clash(const RunOptions& o, const std::vector<ReportTarget>& reports,
                         const std::vector<std::string>& files) {
  std::vector<std::string> inputs = files;
  for (const std::string& f : files) {
    std::error_code ec;
    const std::string expect = std::filesystem::path(f).replace_extension(".expect").string();
    if (std::filesystem::exists(expect, ec)) inputs.push_back(expect);
  }
  std::vector<Output> outputs;
  for (const ReportTarget& t : reports) outputs.push_back({"--report", t.path});
  if (!o.junit.empty()) outputs.push_back({"--junit", o.junit});
  if (std::string clash = outputs_clash(outputs, inputs); !clash.empty()) return clash;
  for (const Output& out : outputs) {  // the next run would read it as a case file
    for (const std::string& p : o.paths) {
      std::error_code ec;
      if (!std::filesystem::is_directory(p, ec) || !read_as_input(out.path, p)) continue;
      return out.flag + ": '" + out.path + "' would be a case file (or a NAME.expect) inside '" + p +
             "', a folder this run reads cases from, so the next run would read it as one; name it .json or .xml";
    }
  }
  for (const ReportTarget& t : reports) {
    if (std::string bad = failures_clash(o, failures_folder(t.path), inputs); !bad.empty()) return bad;
  }
  return {};
}

// The backends to run: the named ones, each of which must be available, or reference
// plus every available candidate. `statuses` gets every backend of the registry.
std::string choose_backends(const Registry& reg, const std::vector<std::string>& builtin, RunOptions& o,
                            std::vector<BackendStatus>& statuses) {
  if (!o.require.empty()) {
    if (!reg.contains(o.require))
      return "--require " + o.require + ": no such backend in this build (see kcheck backends)";
    if (Status s = backend_available(reg, o.require); !s.ok()) {
      return "--require " + o.require + ": unavailable (" + s.message() + ")";
    }
  }
  const bool named = !o.backends.empty();
  for (const std::string& n : o.backends) {
    if (!reg.contains(n)) return "--backend: unknown backend '" + n + "' (see kcheck backends)";
  }
  for (const std::string& n : reg.names()) {
    const Status s = backend_available(reg, n);
    const bool plugin = std::find(builtin.begin(), builtin.end(), n) == builtin.end();
    const bool runs =
        named ? std::find(o.backends.begin(), o.backends.end(), n) != o.backends.end() : n == "reference" || s.ok();
    if (runs && !s.ok()) return "--backend " + n + ": unavailable (" + s.message() + ")";
    if (runs && !named) o.backends.push_back(n);
    statuses.push_back(
        {n, s.ok() ? "" : s.message(), runs, runs && (named || plugin), s.ok() ? backend_numerics(reg, n) : ""});
  }
  return {};
}

// A case that did not load and was not expected to be refused: INVALID once, on no
// backend, not once per backend (five bad files on two backends are five, not ten).
bool invalid_anywhere(const LoadedCase& lc) { return !lc.c.ok() && lc.expect.pass; }

// One group per case: its backends one after another in one worker, sharing what the
// oracle computes for it (checks/oracle_memo.h).
std::vector<IsolatedGroup> make_groups(const std::vector<LoadedCase>& cases, const RunOptions& o, const Registry& reg) {
  std::vector<IsolatedGroup> groups;
  for (const LoadedCase& lc : cases) {
    if (invalid_anywhere(lc)) {
      CaseResult invalid = result_label(lc, kNoBackend);
      invalid.disposition = Disposition::kInvalid;
      invalid.message = lc.c.status().message();
      groups.push_back({{{invalid, [invalid] { return invalid; }}}});
      continue;
    }
    auto memo = std::make_shared<checks::OracleMemo>();
    IsolatedGroup g;
    for (const std::string& b : o.backends) {
      g.tasks.push_back(
          {result_label(lc, b), [&lc, &reg, b, memo] { return check_loaded_on(lc, reg, b, memo.get()); }});
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

constexpr const char* kRunUsage =
    "usage: kcheck run PATH... [--backend a,b] [--plugin lib.so]... [--python mod.py]... [--report r.json]\n"
    "                 [--junit r.xml]\n"
    "                 [--jobs N] [--timeout S] [--require NAME] [--in-process] [--allow-empty]\n"
    "                 [--max-failures N] [--max-crashes K] [--waivers FILE]... [--shard i/n|auto] [--verbose] "
    "[--quiet]\n"
    "                 [--skip-checks a,b] [--cases-per-worker N]\n"
    "  checks every case file under the paths (files, or folders searched for *.yaml, *.yml) on each backend\n"
    "  (default: reference and every available candidate), each case in a worker process for all its\n"
    "  backends; --python mod.py: the backends a Python module declares (docs/python.md), run in workers;\n"
    "  --report r.json: the report, with failures/ beside it (a path holding {backend}: one\n"
    "  report per backend, that name in its place);\n"
    "  --timeout S: per case and backend (default 60); --max-failures N: start no case after N failed\n"
    "  results; --max-crashes K: on a backend, start no case after K crashed or timed-out results in a\n"
    "  row (default 3; 0: no limit), the cases not started being SKIPPED with why; --require NAME: exit 2\n"
    "  unless that backend is available; --waivers FILE (repeatable): known failures (case, backend, check, "
    "diagnosis,\n"
    "  reason, expires): a failure one names is XFAIL (exit 0; one line in the summary, its diagnosis with\n"
    "  --verbose and in the report), a waived check that passes XPASS (exit 1); --skip-checks a,b: those\n"
    "  checks run on no case, whatever the cases ask (named in the summary and the report);\n"
    "  --cases-per-worker N: a worker serves up to N cases before a fresh one replaces it (default 256; 1: a\n"
    "  fresh process per case; sooner after a crash, a timeout, a failed integrity check or a changed\n"
    "  process state);\n"
    "  --shard i/n: the case files k with k mod n = i (auto: from a Slurm array or a Kubernetes Indexed\n"
    "  Job; kcheck merge joins the reports); --in-process: no workers (debugging; cannot be timed out);\n"
    "  progress on stderr: on a terminal one updating line, elsewhere a line every 30 s (--quiet: none).\n"
    "  A backend named with\n"
    "  --backend must be available (exit 2 with the reason), and a named or plugin backend on which every\n"
    "  case was SKIPPED exits 2 naming it, unless --allow-empty. An invalid case file is\n"
    "  one INVALID result, on backend '-'. Exit 0 all passed or skipped, 1 something failed, was\n"
    "  mistrusted, crashed or timed out, 2 bad usage or invalid input; 2 wins over 1.\n";

int run_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(kRunUsage, stdout);
    return 0;
  }
  RunOptions o;
  if (std::string err = parse(args, o); !err.empty()) return usage_error(err);
  Registry reg = builtin_registry();
  const std::vector<std::string> builtin = reg.names();
  for (const std::string& p : o.plugins) {
    if (Status s = load_plugin(p, reg, o.timeout); !s.ok()) return usage_error(s.message());
  }
  for (const std::string& p : o.python) {
    if (Status s = load_python_module(p, reg, o.timeout); !s.ok()) return usage_error(s.message());
  }
  set_rerun_python_modules(o.python);
  std::vector<BackendStatus> statuses;
  if (std::string err = choose_backends(reg, builtin, o, statuses); !err.empty()) return usage_error(err);
  Found found = find_all(o.paths, o.report.empty() ? std::string() : failures_folder(o.report));
  const std::string case_set = case_set_digest(found.files);
  if (o.shards > 1) {
    found.files = shard_of(found.files, o.shard, o.shards);
    if (o.shard != 0) found.unlisted.clear();  // named once, by shard 0
  }
  const std::vector<ReportTarget> reports = report_targets(o.report, o.backends);
  for (const ReportTarget& t : reports) {
    if (std::string bad = per_backend_report(o.report) ? report_target_problem(t) : ""; !bad.empty()) {
      return usage_error(bad);
    }
  }
  if (std::string clash = output_clash(o, reports, found.files); !clash.empty()) return usage_error(clash);
  const auto start = std::chrono::steady_clock::now();
  RunInfo info;
  info.started = now_utc();
  info.command = "kcheck run";
  for (const std::string& a : args) info.command += " " + a;
  std::vector<std::string> considered;
  for (const BackendStatus& b : statuses) considered.push_back(b.name);
  add_build_info(info, considered);  // the device, wherever a GPU backend was considered
  info.backends = std::move(statuses);
  info.extra["case_set"] = case_set;
  info.extra["shard"] = std::to_string(o.shard) + "/" + std::to_string(o.shards);
  set_passed_over(info, found.passed_over);
  std::vector<Waiver> waivers;
  for (const std::string& file : o.waivers) {
    StatusOr<std::vector<Waiver>> w = load_waivers(file);
    if (!w.ok()) return usage_error("--waivers: " + w.status().message());
    waivers.insert(waivers.end(), w->begin(), w->end());
  }
  const std::vector<LoadedCase> cases = load_all(std::move(found));
  set_skipped_checks(o.skip_checks);
  for (const std::string& name : o.skip_checks) {
    info.extra["skipped_checks"] += (info.extra["skipped_checks"].empty() ? "" : ",") + name;
  }
  IsolateOptions iso{o.jobs, o.timeout, o.in_process, nullptr, nullptr, nullptr, o.cases_per_worker};
  RunProgress progress(stderr, isatty(STDERR_FILENO) != 0);
  if (!o.quiet) iso.progress = std::ref(progress);
  FastFailure fast(o.max_failures, o.max_crashes);
  iso.gate = [&fast](const CaseResult& label) { return fast.skip_reason(label); };
  iso.observe = [&fast](const CaseResult& r) { fast.observe(r); };
  std::vector<CaseResult> results = run_groups(make_groups(cases, o, reg), iso);
  const WaiverOutcome waived = apply_waivers(results, waivers, info.started.substr(0, 10));
  for (const std::string& file : o.waivers) info.extra["waivers"] += (info.extra["waivers"].empty() ? "" : " ") + file;
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Report, JUnit and reproducers first: whatever happens to stdout (a reader that went
  // away), what the run found is on disk before the summary is printed.
  bool reproducers_written = true;
  if (std::string why = write_report_targets(reports, results, info, o.plugins, reproducers_written); !why.empty()) {
    return usage_error(why);
  }
  if (!o.junit.empty()) {
    if (std::string why = write_text_file(o.junit, junit_xml(results, info)); !why.empty()) {
      return usage_error("cannot write " + o.junit + ": " + why);
    }
  }
  std::fputs(terminal_safe(summary_text(results, info, o.verbose)).c_str(), stdout);
  std::fputs(terminal_safe(waivers_text(waived, results, !o.waivers.empty())).c_str(), stdout);
  if (!o.skip_checks.empty())
    std::printf("checks left out (--skip-checks): %s\n", info.extra["skipped_checks"].c_str());
  if (!o.report.empty()) {
    std::printf("%s: %s\n", reports.size() > 1 ? "reports" : "report", terminal_safe(o.report).c_str());
  }
  if (results.empty()) return usage_error("no case files found under the given paths");
  if (const std::string empty = nothing_checked(results, info); !empty.empty() && !o.allow_empty) {
    std::fprintf(stderr, "kcheck: %s(a run that checks nothing is not a pass; --allow-empty accepts it)\n",
                 terminal_safe(empty).c_str());
    return 2;
  }
  return reproducers_written ? exit_code(results) : 2;  // an output promised and not written
}

}  // namespace kc::cli
