// kcheck run: every case file under the paths, on each backend, each case x backend in
// a worker process; progress on a terminal, a summary, reports, failure reproducers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli.h"
#include "kc/case_io.h"
#include "kc/isolate.h"
#include "kc/plugin.h"
#include "kc/registry.h"
#include "kc/report.h"
#include "kc/runner.h"

namespace kc::cli {
namespace {

struct RunOptions {
  std::vector<std::string> paths, backends, plugins;
  std::string report, junit, require;
  int jobs = 1;
  double timeout = kDefaultTimeoutSeconds;
  bool in_process = false, timeout_given = false;
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

// Parses the options; returns an error message or empty.
std::string parse(const Args& args, RunOptions& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
      return "run: unknown option '" + a + "' (options start with --; give a file named so as ./" + a + ")";
    } else if (a.rfind("--", 0) != 0) {
      o.paths.push_back(a);
    } else if (a == "--backend" && value(v)) {
      o.backends = split(v);
      if (o.backends.empty() || std::count(v.begin(), v.end(), ',') + 1 != static_cast<long>(o.backends.size())) {
        return "--backend: expected names separated by commas, got '" + v + "'";
      }
      drop_repeats(o.backends);  // a backend named twice runs once
    } else if (a == "--plugin" && value(v)) {
      o.plugins.push_back(v);
    } else if ((a == "--report" || a == "--junit") && value(v)) {
      if (std::string bad = output_file_problem(a, v); !bad.empty()) return bad;
      (a == "--report" ? o.report : o.junit) = v;
    } else if (a == "--require" && value(o.require)) {
      if (o.require.empty()) return "--require: expected a backend name, got ''";
    } else if (a == "--jobs" && value(v)) {
      const auto n = parse_uint(v);
      if (!n || *n == 0 || *n > 1024) return "--jobs: expected an integer from 1 to 1024, got '" + v + "'";
      o.jobs = static_cast<int>(*n);
    } else if (a == "--timeout" && value(v)) {
      const auto t = parse_seconds(v);
      if (!t) return "--timeout: expected a positive number of seconds, got '" + v + "'";
      o.timeout = *t;
      o.timeout_given = true;
    } else if (a == "--in-process") {
      o.in_process = true;
    } else {
      return "run: unknown option or missing value: '" + a + "'";
    }
  }
  if (o.in_process && o.timeout_given) return in_process_timeout_problem();
  return o.paths.empty() ? "run: give at least one case file or folder" : "";
}

// A file that cannot carry `expect:` (not YAML, empty, not a map) may have a sibling
// NAME.expect holding the expected error text on its first line.
void apply_sibling_expect(const std::string& file, std::vector<LoadedCase>& loaded) {
  std::filesystem::path p(file);
  std::ifstream f(p.replace_extension(".expect"));
  std::string text;
  if (!f || !std::getline(f, text) || text.empty()) return;
  for (LoadedCase& lc : loaded) {
    if (lc.expect.pass) lc.expect = Expectation{false, text};
  }
}

// Regression cases are replayed first; otherwise files keep their sorted order. Folders
// that could not be listed come last, INVALID with the reason.
std::vector<LoadedCase> load_all(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  std::vector<LoadedCase> unlisted;
  std::set<std::string> seen, seen_unlisted;  // a file named twice (or under two given folders) runs once
  auto key = [](const std::string& f) {
    std::error_code ec;
    const std::string canonical = std::filesystem::weakly_canonical(f, ec).string();
    return ec ? f : canonical;
  };
  for (const std::string& p : paths) {
    CaseFiles found = find_case_files(p);
    for (std::string& f : found.files) {
      if (seen.insert(key(f)).second) files.push_back(std::move(f));
    }
    for (LoadedCase& problem : found.problems) {
      if (seen_unlisted.insert(key(problem.file)).second) unlisted.push_back(std::move(problem));
    }
  }
  std::stable_partition(files.begin(), files.end(),
                        [](const std::string& f) { return f.find("/regressions/") != std::string::npos; });
  std::vector<LoadedCase> cases;
  for (const std::string& f : files) {
    std::vector<LoadedCase> loaded = load_case_file(f);
    apply_sibling_expect(f, loaded);
    for (LoadedCase& c : loaded) cases.push_back(std::move(c));
  }
  for (LoadedCase& problem : unlisted) cases.push_back(std::move(problem));
  return cases;
}

// The backends to run: the named ones, or reference plus every available candidate.
std::string choose_backends(const Registry& reg, RunOptions& o) {
  if (!o.require.empty()) {
    if (!reg.contains(o.require)) return "--require " + o.require + ": no such backend in this build (see kcheck backends)";
    if (Status s = backend_available(reg, o.require); !s.ok()) {
      return "--require " + o.require + ": unavailable (" + s.message() + ")";
    }
  }
  if (!o.backends.empty()) {
    for (const std::string& n : o.backends) {
      if (!reg.contains(n)) return "--backend: unknown backend '" + n + "' (see kcheck backends)";
    }
    return {};
  }
  for (const std::string& n : reg.names()) {
    if (n == "reference" || backend_available(reg, n).ok()) o.backends.push_back(n);
  }
  return {};
}

std::vector<IsolatedTask> make_tasks(const std::vector<LoadedCase>& cases, const RunOptions& o,
                                     const Registry& reg) {
  std::vector<IsolatedTask> tasks;
  for (const LoadedCase& lc : cases) {
    for (const std::string& b : o.backends) {
      CaseResult label;
      label.source = lc.file + ":" + std::to_string(lc.line);
      label.case_name = lc.c.ok() ? case_label(*lc.c) : label.source;
      label.backend = b;
      if (lc.c.ok()) label.reproducer = case_to_one_line(*lc.c);
      tasks.push_back({label, [&lc, &reg, b] { return check_loaded_on(lc, reg, b); }});
    }
  }
  return tasks;
}

// failures/NNN.yaml next to the report: one reproducer per case that did not pass.
void write_failures(const std::string& report, const std::vector<CaseResult>& results) {
  const auto dir = std::filesystem::path(report).parent_path() / "failures";
  int n = 0;
  for (const CaseResult& r : results) {
    const std::string y = failure_yaml(r);
    if (y.empty() || r.disposition == Disposition::kPassed || r.disposition == Disposition::kSkipped) continue;
    char name[32];
    std::snprintf(name, sizeof name, "%03d-%s.yaml", ++n, r.backend.c_str());
    write_text_file((dir / name).string(), y);
  }
  if (n) std::printf("%d failure reproducers in %s\n", n, terminal_safe(dir.string()).c_str());
}

void progress_line(size_t done, size_t total, const CaseResult& r) {
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %-10s %s [%s]", done, total,
               std::string(disposition_name(r.disposition)).c_str(),
               terminal_safe(one_line(r.case_name.substr(0, 60))).c_str(), terminal_safe(one_line(r.backend)).c_str());
  if (done == total) std::fputc('\n', stderr);
}

}  // namespace

constexpr const char* kRunUsage =
    "usage: kcheck run PATH... [--backend a,b] [--plugin lib.so]... [--report r.json] [--junit r.xml]\n"
    "                 [--jobs N] [--timeout S] [--require NAME] [--in-process]\n"
    "  checks every case file under the paths (files, or folders searched for *.yaml) on each backend\n"
    "  (default: reference and every available candidate), each case and backend in a worker process;\n"
    "  --timeout S: per case and backend (default 600); --require NAME: exit 2 unless that backend is\n"
    "  available; --in-process: no workers (debugging; cannot be timed out). Exit 0 all passed or\n"
    "  skipped, 1 something failed, was mistrusted, crashed or timed out, 2 bad usage or invalid input.\n";

int run_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(kRunUsage, stdout);
    return 0;
  }
  RunOptions o;
  if (std::string err = parse(args, o); !err.empty()) return usage_error(err);
  Registry reg = builtin_registry();
  for (const std::string& p : o.plugins) {
    if (Status s = load_plugin(p, reg); !s.ok()) return usage_error(s.message());
  }
  if (std::string err = choose_backends(reg, o); !err.empty()) return usage_error(err);
  const auto start = std::chrono::steady_clock::now();
  RunInfo info;
  info.started = now_utc();
  info.command = "kcheck run";
  for (const std::string& a : args) info.command += " " + a;
  add_build_info(info, o.backends);
  const std::vector<LoadedCase> cases = load_all(o.paths);
  IsolateOptions iso{o.jobs, o.timeout, o.in_process, nullptr};
  if (isatty(STDERR_FILENO)) iso.progress = progress_line;
  const std::vector<CaseResult> results = run_tasks(make_tasks(cases, o, reg), iso);
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fputs(terminal_safe(summary_text(results, info)).c_str(), stdout);
  if (!o.report.empty()) {
    if (!write_text_file(o.report, report_json(results, info))) return usage_error("cannot write " + o.report);
    write_failures(o.report, results);
    std::printf("report: %s\n", terminal_safe(o.report).c_str());
  }
  if (!o.junit.empty() && !write_text_file(o.junit, junit_xml(results, info))) return usage_error("cannot write " + o.junit);
  if (results.empty()) return usage_error("no case files found under the given paths");
  return exit_code(results);
}

}  // namespace kc::cli
