// kcheck bench PATH... --backend a,b: every op of every case timed on each backend, next
// to the ceilings and peers measured in the same run (docs/bench.md). Each case x
// backend runs in a worker process (a crash is an entry, not the end of the run); the
// workers run one at a time, so that no two timings share the machine.
#include <Eigen/Core>
#include <cstdio>
#include <sstream>

#include "backend/build_info.h"
#include "backend/python_modules.h"
#include "bench/bench_report.h"
#include "bench/case_bench.h"
#include "bench/ceilings.h"
#include "bench/entry_json.h"
#include "bench_options.h"
#include "kc/case_io.h"
#include "kc/plugin.h"
#include "kc/registry.h"
#include "kc/report.h"
#include "run/isolate.h"

namespace kc::cli {
namespace {

constexpr const char* kBenchUsage =
    "usage: kcheck bench PATH... [--backend a,b] [--plugin lib.so] [--python mod.py] [--out bench.json]\n"
    "                    [--min-time S] [--min-reps N] [--max-reps N] [--max-time S]\n"
    "                    [--cache warm|cold|both]\n"
    "                    [--timeout S] [--no-ceilings] [--in-process]\n"
    "  times every op of every case under PATH on each backend (default reference): warm-up, runs\n"
    "  until --min-time (0.2 s) and --min-reps (5), at most --max-reps (1000) or --max-time (5 s,\n"
    "  one run at least); median and spread. --cache cold rotates instances past the last-level\n"
    "  cache. Timed outputs are re-checked against the oracle. Ceilings (triad, GEMMs; a GPU's copy\n"
    "  and cuBLAS GEMMs) and peers (onednn, cudnn) are measured in the same run. --out writes\n"
    "  Google Benchmark JSON with kc_ fields (docs/bench.md).\n"
    "exit: 0 measured, 1 a re-check failed, a fraction of a ceiling above 1.10 (docs/bench.md), an op\n"
    "      failed to prepare or run, a worker crashed, or nothing was timed,\n"
    "      2 bad usage or an invalid case (2 wins)\n";

using bench::BenchEntry;

CaseResult label_for(const LoadedCase& lc, const std::string& backend) {
  CaseResult r;
  r.case_name = lc.c.ok() ? lc.c->name : lc.file;
  r.source = source_of(lc);
  r.backend = backend;
  return r;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// One worker per case for every backend, so that the oracle, which costs the most, is
// computed once; the worker's entries travel as one field each.
CaseResult bench_task(const LoadedCase& lc, const Registry& reg, const std::vector<std::string>& backends,
                      const bench::BenchOptions& o) {
  CaseResult r = label_for(lc, joined(backends));
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<Backend*> raw;
  for (const std::string& b : backends) raw.push_back(owned.emplace_back(reg.make(b)).get());
  for (const BenchEntry& e : bench::bench_case_on(raw, *lc.c, lc.file, o)) r.fields.push_back({"entry", entry_json(e)});
  return r;
}

CaseResult ceiling_task(const Registry& reg, const std::string& backend) {
  CaseResult r;
  r.case_name = "ceilings";
  r.backend = backend;
  std::unique_ptr<Backend> be = reg.make(backend);
  StatusOr<std::vector<Ceiling>> cs = be->measure_ceilings();
  if (!cs.ok()) r.message = cs.status().to_string();
  for (const Ceiling& c : cs.ok() ? *cs : std::vector<Ceiling>{})
    r.fields.push_back({"ceiling", bench::ceiling_wire(c)});
  return r;
}

// A worker that died: an error entry for each of its backends (label "a,b").
void died(const CaseResult& r, std::vector<BenchEntry>& out) {
  std::stringstream names(r.backend);
  for (std::string b; std::getline(names, b, ',');) {
    BenchEntry e;
    e.case_name = r.case_name;
    e.file = std::string(source_file_of(r.source));
    e.backend = b;
    e.op = "case";
    e.mode = "-";
    e.error = std::string(r.disposition == Disposition::kTimeout ? "timeout: " : "crashed: ") + r.message;
    out.push_back(std::move(e));
  }
}

struct Collected {
  std::vector<BenchEntry> entries;
  std::vector<Ceiling> ceilings;
  int invalid = 0;
};

// Ceilings are measured at the start and at the end of the run (a shared machine's clock
// moves between them, and the kernels ran in between): of two measures of one ceiling,
// and of the same ceiling from two backends, the higher stands.
void keep_best(std::vector<Ceiling>& all, Ceiling c) {
  for (Ceiling& have : all) {
    if (have.name != c.name || have.device != c.device) continue;
    if (c.per_second > have.per_second) have = std::move(c);
    return;
  }
  all.push_back(std::move(c));
}

void collect(const std::vector<CaseResult>& results, Collected& c) {
  for (const CaseResult& r : results) {
    if (r.disposition == Disposition::kCrashed || r.disposition == Disposition::kTimeout) {
      if (r.case_name != "ceilings") died(r, c.entries);
      continue;
    }
    for (const auto& [kind, json] : r.fields) {
      if (kind == "entry") {
        if (auto e = bench::parse_entry_json(json); e.ok()) c.entries.push_back(std::move(*e));
      } else if (kind == "ceiling") {
        if (auto ce = bench::parse_ceiling_wire(json); ce.ok()) keep_best(c.ceilings, std::move(*ce));
      }
    }
  }
}

std::vector<LoadedCase> load_cases(const std::vector<std::string>& paths, int& invalid) {
  std::vector<LoadedCase> out;
  for (const std::string& p : paths) {
    CaseFiles found = find_case_files(p);
    for (LoadedCase& problem : found.problems) {
      std::fprintf(stderr, "kcheck bench: %s\n", terminal_safe(problem.c.status().message()).c_str());
      ++invalid;
    }
    for (const std::string& f : found.files) {
      for (LoadedCase& lc : load_case_file(f)) {
        if (lc.c.ok()) {
          out.push_back(std::move(lc));
        } else if (lc.expect.pass) {  // an invalid case meant to be refused is not benched
          std::fprintf(stderr, "kcheck bench: %s: %s\n", source_of(lc).c_str(),
                       terminal_safe(lc.c.status().message()).c_str());
          ++invalid;
        }
      }
    }
  }
  return out;
}

}  // namespace

int bench_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(kBenchUsage, stdout);
    return 0;
  }
  BenchCliOptions o;
  if (std::string err = parse_bench_options(args, o); !err.empty()) return usage_error(err);
  if (!o.out.empty()) {
    if (std::string why = output_file_problem("--out", o.out); !why.empty()) return usage_error(why);
  }
  Registry reg = builtin_registry();
  for (const std::string& p : o.plugins) {
    if (Status s = load_plugin(p, reg); !s.ok()) return usage_error(s.message());
  }
  for (const std::string& p : o.python) {
    if (Status s = load_python_module(p, reg, o.timeout); !s.ok()) return usage_error(s.message());
  }
  for (const std::string& b : o.backends) {
    if (!reg.contains(b)) return usage_error("--backend: unknown backend '" + b + "' (see kcheck backends)");
  }
  bench::BenchRunInfo info = bench::host_run_info();
  std::vector<std::string> runnable;
  for (const std::string& b : o.backends) {
    const Status s = backend_available(reg, b);
    info.backends.push_back({b, s.ok() ? "" : s.message()});
    if (s.ok()) runnable.push_back(b);
  }
  Collected c;
  const std::vector<LoadedCase> cases = load_cases(o.paths, c.invalid);
  if (o.ceilings) c.ceilings = bench::measure_host_ceilings(static_cast<int>(info.num_cpus));
  const bench::BenchOptions bo{o.budget, o.warm, o.cold};
  std::vector<IsolatedTask> tasks;
  auto ceiling_tasks = [&] {
    for (const std::string& b : runnable) {
      CaseResult label;
      label.case_name = "ceilings";
      label.backend = b;
      if (o.ceilings) tasks.push_back({label, [&reg, b] { return ceiling_task(reg, b); }});
    }
  };
  ceiling_tasks();
  for (const LoadedCase& lc : cases) {
    if (!runnable.empty())
      tasks.push_back(
          {label_for(lc, joined(runnable)), [&lc, &reg, &runnable, &bo] { return bench_task(lc, reg, runnable, bo); }});
  }
  ceiling_tasks();
  IsolateOptions iso{1, o.timeout, o.in_process, nullptr, nullptr, nullptr};
  // A worker that imported a Python module serves the next case too: the import is paid
  // once, outside every timed region either way.
  if (!o.python.empty()) iso.cases_per_worker = kDefaultCasesPerWorker;
  iso.progress = [](size_t done, size_t total, const CaseResult& r) {
    std::fprintf(stderr, "[%zu/%zu] %s [%s]\n", done, total, terminal_safe(r.case_name).c_str(), r.backend.c_str());
  };
  collect(run_tasks(std::move(tasks), iso), c);
  if (o.ceilings) {
    for (Ceiling& again : bench::measure_host_ceilings(static_cast<int>(info.num_cpus)))
      keep_best(c.ceilings, std::move(again));
  }
  return finish_bench(o, info, std::move(c.entries), std::move(c.ceilings), c.invalid);
}

}  // namespace kc::cli
