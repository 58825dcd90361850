// The end of a kcheck bench run: entries judged, the seeds' tables and the targets, the
// run's context (commit, machine, device, libraries), the summary and the JSON.
#include <Eigen/Core>
#include <cstdio>

#include "backend/build_info.h"
#include "bench/judge.h"
#include "bench/tables.h"
#include "bench_options.h"
#include "kc/report.h"

namespace kc::cli {
namespace {

void add_context(const BenchCliOptions& o, bench::BenchRunInfo& info) {
  RunInfo run;
  std::vector<std::string> considered;
  for (const auto& [name, why] : info.backends) considered.push_back(name);
  add_build_info(run, considered);  // kc_version, kc_commit, host_cpu, device (a GPU backend considered)
  info.context["kc_version"] = run.extra["kc_version"];
  info.context["kc_commit"] = run.extra["kc_commit"];
  const std::string gpu = run.extra.count("device") ? run.extra["device"] : "";
  if (!gpu.empty()) info.context["kc_gpu"] = gpu;
  const std::string peers = peer_library_versions();
  info.context["kc_libraries"] = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                                 std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION) +
                                 (peers.empty() ? "" : ", " + peers);
  info.context["kc_machine"] = info.context["kc_cpu"] + " x" + std::to_string(info.num_cpus) +
                               (gpu.empty() || gpu.rfind("none", 0) == 0 ? "" : " + " + gpu);
  std::string command = "kcheck bench";
  for (const std::string& p : o.paths) command += " " + p;
  info.context["kc_command"] = command;
}

}  // namespace

int finish_bench(const BenchCliOptions& o, bench::BenchRunInfo& info, std::vector<bench::BenchEntry> entries,
                 std::vector<Ceiling> ceilings, int invalid) {
  bench::BenchResults r;
  r.entries = std::move(entries);
  r.ceilings = std::move(ceilings);
  bench::judge_entries(r.entries, r.ceilings);
  r.tables = bench::seed_tables(r.entries);
  r.targets = bench::judge_targets(r.entries, r.ceilings);
  add_context(o, info);
  std::fputs(terminal_safe(bench::bench_summary_text(r, info)).c_str(), stdout);
  if (!o.out.empty()) {
    if (std::string why = write_text_file(o.out, bench::bench_report_json(r, info)); !why.empty()) {
      std::fprintf(stderr, "kcheck bench: cannot write %s: %s\n", o.out.c_str(), why.c_str());
      return 2;
    }
    std::printf("wrote %s\n", o.out.c_str());
  }
  if (invalid > 0) return 2;
  int64_t timed = 0;
  for (const bench::BenchEntry& e : r.entries) timed += e.error.empty() && e.skipped.empty();
  if (timed == 0) {
    std::fprintf(stderr, "kcheck bench: nothing was timed\n");
    return 1;
  }
  return r.failures() > 0 ? 1 : 0;
}

}  // namespace kc::cli
