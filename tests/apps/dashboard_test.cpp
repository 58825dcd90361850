// kcheck-dashboard: reading Google Benchmark JSON, the targets judged on it (the same
// table kcheck-bench prints), the text and HTML dashboards, and runs from git history.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench_json.h"
#include "git_history.h"
#include "render.h"
#include "targets.h"

namespace kc::bench {
namespace {

// A run in Google Benchmark's JSON shape: the conv and GEMM entries (GFLOP/s given),
// the stack steps as repetitions (mean, median, stddev aggregates) and the gradcheck.
std::string bench_json(const std::string& date, double conv_gflops, double sqrt_ms, const std::string& commit = "") {
  const std::string ctx = commit.empty() ? "" : ", \"kc_commit\": \"" + commit + "\"";
  return "{\"context\": {\"date\": \"" + date + "\", \"host_name\": \"box\"" + ctx +
         "},\n \"benchmarks\": [\n"
         "  {\"name\": \"BM_RefConvForward/real_time\", \"run_name\": \"BM_RefConvForward/real_time\", "
         "\"run_type\": \"iteration\", \"iterations\": 10, \"real_time\": 65.0, \"cpu_time\": 65.0, "
         "\"time_unit\": \"ms\", \"GFLOP/s\": " +
         std::to_string(conv_gflops) +
         "},\n"
         "  {\"name\": \"BM_EigenGemm/real_time\", \"run_name\": \"BM_EigenGemm/real_time\", \"run_type\": "
         "\"iteration\", "
         "\"iterations\": 10, \"real_time\": 44000.0, \"cpu_time\": 44000.0, \"time_unit\": \"us\", \"GFLOP/s\": "
         "25.0},\n"
         "  {\"name\": \"BM_StackStepNone/real_time\", \"run_name\": \"BM_StackStepNone/real_time\", "
         "\"run_type\": \"iteration\", \"iterations\": 3, \"real_time\": 30.0, \"time_unit\": \"ms\"},\n"
         "  {\"name\": \"BM_StackStepSqrt/real_time\", \"run_name\": \"BM_StackStepSqrt/real_time\", "
         "\"run_type\": \"iteration\", \"iterations\": 3, \"real_time\": 99.0, \"time_unit\": \"ms\", "
         "\"peak_activation_bytes\": 917504, \"sqrt_bound_bytes\": 1572864, \"recomputed_layers\": NaN},\n"
         "  {\"name\": \"BM_StackStepSqrt/real_time_mean\", \"run_name\": \"BM_StackStepSqrt/real_time\", "
         "\"run_type\": \"aggregate\", \"aggregate_name\": \"mean\", \"real_time\": 80.0, \"time_unit\": \"ms\", "
         "\"peak_activation_bytes\": 917504, \"sqrt_bound_bytes\": 1572864},\n"
         "  {\"name\": \"BM_StackStepSqrt/real_time_median\", \"run_name\": \"BM_StackStepSqrt/real_time\", "
         "\"run_type\": \"aggregate\", \"aggregate_name\": \"median\", \"real_time\": " +
         std::to_string(sqrt_ms) +
         ", \"time_unit\": \"ms\", \"peak_activation_bytes\": 917504, \"sqrt_bound_bytes\": 1572864},\n"
         "  {\"name\": \"BM_StackStepSqrt/real_time_stddev\", \"run_name\": \"BM_StackStepSqrt/real_time\", "
         "\"run_type\": \"aggregate\", \"aggregate_name\": \"stddev\", \"real_time\": 3.0, \"time_unit\": \"ms\"},\n"
         "  {\"name\": \"BM_Broken\", \"run_name\": \"BM_Broken\", \"run_type\": \"iteration\", \"error_occurred\": "
         "true, "
         "\"error_message\": \"skipped\", \"real_time\": 0, \"time_unit\": \"ns\"}\n"
         " ]}\n";
}

const Target& target(std::string_view key) {
  for (const Target& t : targets()) {
    if (t.key == key) return t;
  }
  throw std::runtime_error("no target " + std::string(key));
}

TEST(BenchJson, EntriesAreMediansInSecondsWithTheirCounters) {
  auto run = parse_bench_json(bench_json("2026-01-02T00:00:00+00:00", 12.5, 36.0, "abc"), "r.json");
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  EXPECT_EQ(run->date, "2026-01-02T00:00:00+00:00");
  EXPECT_EQ(run->host, "box");
  EXPECT_EQ(run->commit, "abc");
  EXPECT_EQ(run->entries.size(), 4u);                                // BM_Broken had an error
  EXPECT_DOUBLE_EQ(run->entries.at("BM_EigenGemm").seconds, 0.044);  // us
  EXPECT_DOUBLE_EQ(run->entries.at("BM_RefConvForward").counters.at("GFLOP/s"), 12.5);
  EXPECT_DOUBLE_EQ(run->entries.at("BM_StackStepSqrt").seconds, 0.036);  // the median, not 99 or 80
  EXPECT_EQ(run->entries.at("BM_StackStepSqrt").counters.count("iterations"), 0u);
}

TEST(BenchJson, BadInputNamesTheSourceAndTheField) {
  struct Bad {
    std::string text, message;
  };
  const Bad bad[] = {
      {"{\"benchmarks\": [", "r.json: not Google Benchmark JSON"},
      {"[1, 2]", "r.json: not Google Benchmark JSON: the top level is not an object"},
      {"{\"context\": {}}", "r.json: benchmarks: missing or not a list"},
      {"{\"benchmarks\": [{\"name\": \"BM_A\", \"real_time\": \"fast\", \"time_unit\": \"ms\"}]}",
       "r.json: benchmarks[0].real_time: missing or not a number"},
      {"{\"benchmarks\": [{\"name\": \"BM_A\", \"real_time\": 1, \"time_unit\": \"min\"}]}",
       "r.json: benchmarks[0].time_unit: 'min' is not ns, us, ms or s"},
      {"{\"benchmarks\": []}", "r.json: benchmarks: no entry without an error"},
  };
  for (const Bad& b : bad) {
    auto run = parse_bench_json(b.text, "r.json");
    ASSERT_FALSE(run.ok()) << b.text;
    EXPECT_NE(run.status().message().find(b.message), std::string::npos) << run.status().message();
  }
  EXPECT_EQ(read_bench_json("/nonexistent/r.json").status().code(), StatusCode::kNotFound);
}

TEST(BenchTargets, EachKindIsJudgedAgainstItsLimit) {
  Entries e;
  e["BM_RefConvForward"].counters["GFLOP/s"] = 10.0;
  e["BM_EigenGemm"].counters["GFLOP/s"] = 20.0;
  auto conv = evaluate(target("conv_vs_gemm"), e);
  ASSERT_TRUE(conv);
  EXPECT_DOUBLE_EQ(conv->value, 0.5);
  EXPECT_TRUE(conv->met);
  e["BM_RefConvForward"].counters["GFLOP/s"] = 7.0;
  EXPECT_FALSE(evaluate(target("conv_vs_gemm"), e)->met);  // 0.35 < 0.40
  e["BM_StackStepNone"].seconds = 0.030;
  e["BM_StackStepSqrt"].seconds = 0.042;  // 1.4 > 1.35
  auto stack = evaluate(target("stack_sqrt_vs_none"), e);
  ASSERT_TRUE(stack);
  EXPECT_NEAR(stack->value, 1.4, 1e-12);
  EXPECT_FALSE(stack->met);
  EXPECT_FALSE(evaluate(target("stack_sqrt_peak"), e));  // no counters in this run
  e["BM_StackStepSqrt"].counters = {{"peak_activation_bytes", 2e6}, {"sqrt_bound_bytes", 1572864}};
  auto peak = evaluate(target("stack_sqrt_peak"), e);
  ASSERT_TRUE(peak);
  EXPECT_FALSE(peak->met);
  EXPECT_EQ(peak->limit, 1572864);
  EXPECT_FALSE(evaluate(target("gradcheck_seconds"), e));  // entry filtered out of the run
  e["BM_DirectionalGradcheck"].seconds = 1.5;
  EXPECT_TRUE(evaluate(target("gradcheck_seconds"), e)->met);
  e["BM_EigenGemm"].counters["GFLOP/s"] = 0.0;  // nothing to divide by
  EXPECT_FALSE(evaluate(target("conv_vs_gemm"), e));
}

TEST(Dashboard, RunsOldestFirstAndAMissedTargetIsMarked) {
  // Given newest first: the newer run's conv is 9/25 = 0.36 of the GEMM (missed), its
  // stack sqrt step 36/30 = 1.2 (met).
  std::vector<BenchRun> runs = {*parse_bench_json(bench_json("2026-03-01T00:00:00+00:00", 9.0, 36.0), "new.json"),
                                *parse_bench_json(bench_json("2026-02-01T00:00:00+00:00", 15.0, 45.0), "old.json")};
  order_runs(runs);
  ASSERT_EQ(runs.front().source, "old.json");
  const std::string text = render_text(runs);
  // The line of a target in the text dashboard.
  auto line = [&](const std::string& what) {
    const size_t at = text.find(what);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  const std::string conv = line("reference conv fwd / Eigen GEMM (f64)");
  EXPECT_NE(conv.find("target >= 0.40"), std::string::npos) << text;
  EXPECT_NE(conv.find("newest MISSED"), std::string::npos) << conv;
  EXPECT_NE(conv.find("history: 0.600 0.360!"), std::string::npos) << conv;
  const std::string stack = line("stack step sqrt / none (reference)");
  EXPECT_NE(stack.find("newest MET"), std::string::npos) << stack;
  EXPECT_NE(stack.find("history: 1.500! 1.200"), std::string::npos) << stack;
  EXPECT_NE(line("stack sqrt peak activation bytes").find("history: 917504 917504"), std::string::npos) << text;
  const std::string html = render_html(runs);
  EXPECT_NE(html.find("<td class=\"l missed\">MISSED</td><td class=\"l\">0.6 &rarr; 0.36!</td>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("&lt;= 1.35"), std::string::npos);  // escaped
  EXPECT_EQ(html.find("<= 1.35"), std::string::npos);
}

// Two committed versions of a report in a scratch repository: both are read, oldest
// first, labelled by the commit that recorded them (they carry no kc_commit).
TEST(Dashboard, ReadsEveryCommittedVersionOfAReport) {
  namespace fs = std::filesystem;
  const fs::path repo = fs::temp_directory_path() / ("kc_dashboard_" + std::to_string(::getpid()));
  fs::remove_all(repo);
  fs::create_directories(repo / "reports");
  const fs::path cwd = fs::current_path();
  fs::current_path(repo);
  const std::string git = "git -c user.name=t -c user.email=t@t -c commit.gpgsign=false ";
  ASSERT_EQ(std::system((git + "init -q . >/dev/null 2>&1").c_str()), 0) << "git is needed";
  for (double conv : {15.0, 9.0}) {
    std::ofstream(repo / "reports" / "bench.json") << bench_json("", conv, 36.0);
    ASSERT_EQ(std::system((git + "add reports/bench.json && " + git + "commit -qm run >/dev/null").c_str()), 0);
  }
  auto runs = read_git_history("reports/bench.json");
  auto missing = read_git_history("reports/none.json");
  fs::current_path(cwd);
  fs::remove_all(repo);
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].recorded.size(), 40u);
  EXPECT_EQ(run_label((*runs)[0]), (*runs)[0].recorded.substr(0, 12));
  EXPECT_DOUBLE_EQ((*runs)[0].entries.at("BM_RefConvForward").counters.at("GFLOP/s"), 15.0);
  EXPECT_DOUBLE_EQ((*runs)[1].entries.at("BM_RefConvForward").counters.at("GFLOP/s"), 9.0);
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace kc::bench
