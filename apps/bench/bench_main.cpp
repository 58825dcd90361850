// kcheck-bench: Google Benchmark entries for kernelcheck, then the ratios each target
// is stated in, between entries of the same run. Google Benchmark flags pass through
// (e.g. --benchmark_out=r.json --benchmark_filter=Conv --benchmark_repetitions=5).
#include <benchmark/benchmark.h>

#include <cstdio>

#include "ratio_reporter.h"

namespace kc::bench {

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.error_occurred) continue;
    const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
    if (r.run_type != Run::RT_Iteration && !median) continue;
    Entry& e = entries_[r.run_name.function_name];
    e.seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
    for (const auto& [name, c] : r.counters) e.counters[name] = c.value;
  }
  ConsoleReporter::ReportRuns(runs);
}

const RatioReporter::Entry* RatioReporter::entry(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

double RatioReporter::gflops(const std::string& name) const {
  const Entry* e = entry(name);
  if (e == nullptr) return 0.0;
  auto it = e->counters.find("GFLOP/s");
  return it == e->counters.end() ? 0.0 : it->second;
}

namespace {
const char* verdict(bool met) { return met ? "MET" : "MISSED"; }
}  // namespace

bool RatioReporter::print_ratio(const std::string& what, const std::string& a, const std::string& b,
                                double target) const {
  const double ga = gflops(a), gb = gflops(b);
  if (ga <= 0.0 || gb <= 0.0) return true;  // filtered out of this run
  const double r = ga / gb;
  std::printf("%-44s %8.3f  (%s %.2f / %s %.2f GFLOP/s; target >= %.2f) %s\n", what.c_str(), r,
              a.c_str(), ga, b.c_str(), gb, target, verdict(r >= target));
  return r >= target;
}

bool RatioReporter::print_time_ratio(const std::string& what, const std::string& a, const std::string& b,
                                     double target) const {
  const Entry *ea = entry(a), *eb = entry(b);
  if (ea == nullptr || eb == nullptr || eb->seconds <= 0.0) return true;
  const double r = ea->seconds / eb->seconds;
  std::printf("%-44s %8.3f  (%s %.2f ms / %s %.2f ms; target <= %.2f) %s\n", what.c_str(), r, a.c_str(),
              1e3 * ea->seconds, b.c_str(), 1e3 * eb->seconds, target, verdict(r <= target));
  return r <= target;
}

bool RatioReporter::print_time(const std::string& what, const std::string& a, double target_seconds) const {
  const Entry* e = entry(a);
  if (e == nullptr) return true;
  std::printf("%-44s %8.3f s  (%s; target <= %.2f s) %s\n", what.c_str(), e->seconds, a.c_str(), target_seconds,
              verdict(e->seconds <= target_seconds));
  return e->seconds <= target_seconds;
}

bool RatioReporter::print_within(const std::string& what, const std::string& a, const std::string& counter,
                                 const std::string& bound) const {
  const Entry* e = entry(a);
  if (e == nullptr || !e->counters.count(counter) || !e->counters.count(bound)) return true;
  const double v = e->counters.at(counter), b = e->counters.at(bound);
  std::printf("%-44s %8.0f  (%s %s; bound %s %.0f) %s\n", what.c_str(), v, a.c_str(), counter.c_str(), bound.c_str(),
              b, verdict(v <= b));
  return v <= b;
}

}  // namespace kc::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  kc::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nratios measured in this run:\n");
  reporter.print_ratio("reference conv fwd / Eigen GEMM (f64)", "BM_RefConvForward", "BM_EigenGemm", 0.40);
  reporter.print_time("directional gradcheck, 1M-element conv", "BM_DirectionalGradcheck", 2.0);
  reporter.print_time_ratio("stack step sqrt / none (reference)", "BM_StackStepSqrt", "BM_StackStepNone", 1.35);
  reporter.print_within("stack sqrt peak activation bytes", "BM_StackStepSqrt", "peak_activation_bytes",
                        "sqrt_bound_bytes");
  benchmark::Shutdown();
  return 0;
}
