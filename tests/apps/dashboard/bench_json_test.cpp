// Reading kcheck bench JSON (docs/bench.md): entries as Samples with their kc_ fields,
// ceilings, errors, tables, targets and failures; kcheck-bench JSON keeps working, with the
// spread of its repetitions; bad kc_ fields are errors naming the source and the field.
#include <gtest/gtest.h>

#include "bench_json.h"
#include "synthetic_run.h"

namespace kc::bench {
namespace {

const std::string kFixtures = KC_DASHBOARD_FIXTURES;

TEST(BenchJsonKc, ReadsEveryKcField) {
  auto run = read_bench_json(kFixtures + "/kc_machine_b_run1.json");
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  EXPECT_EQ(run->format, RunFormat::kKcheckBench);
  EXPECT_EQ(run->machine, "AMD EPYC 9654 x16 cores, NVIDIA H100");
  EXPECT_EQ(run->gpu, "NVIDIA H100 80GB HBM3 (driver 550.54)");
  ASSERT_EQ(run->samples.size(), 5u);
  const Sample& s = run->samples[0];
  EXPECT_EQ(s.chart_key(), "conv_resnet / conv_forward / warm f32");
  EXPECT_EQ(s.backend, "mykern");
  EXPECT_EQ(s.peer, "onednn");
  EXPECT_NEAR(s.seconds, 0.3e-3, 1e-12);  // real_time in us
  EXPECT_NEAR(s.spread, 0.03, 1e-12);
  EXPECT_NEAR(s.p25_seconds, 0.3e-3 * 0.985, 1e-12);
  EXPECT_GT(s.gflops, 0.0);
  EXPECT_TRUE(run->samples[3].recheck_failed());
  ASSERT_EQ(run->ceilings.size(), 1u);
  EXPECT_EQ(run->ceilings[0].name, "onednn gemm f32");
  EXPECT_EQ(run->ceilings[0].device, "cpu");
  ASSERT_EQ(run->errors.size(), 1u);
  EXPECT_EQ(run->errors[0].message, "out of memory preparing the op");
  ASSERT_EQ(run->tables.size(), 1u);
  EXPECT_EQ(run->tables[0].columns.size(), 3u);
  EXPECT_EQ(run->tables[0].rows[1][0], "sqrt");
  ASSERT_EQ(run->targets.size(), 1u);
  EXPECT_FALSE(run->targets[0].met);
  EXPECT_EQ(run->failures, 1);
}

TEST(BenchJsonKc, BadKcFieldsNameTheSourceAndTheField) {
  const std::string head = "{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"time_unit\": \"us\", ";
  struct Bad {
    std::string text, message;
  };
  const Bad bad[] = {
      {head + "\"kc_case\": \"c\"}]}", "r.json: benchmarks[0].kc_backend: missing"},
      {head + "\"kc_case\": \"c\", \"kc_backend\": \"b\"}], \"kc_tables\": 3}", "r.json: kc_tables: not a list"},
      {head + "\"kc_case\": \"c\", \"kc_backend\": \"b\"}], \"kc_targets\": [{\"key\": \"k\", \"met\": \"yes\"}]}",
       "r.json: kc_targets[0].met: missing or not true/false"},
      {head + "\"kc_case\": \"c\", \"kc_backend\": \"b\"}], \"kc_failures\": \"many\"}",
       "r.json: kc_failures: not a count"},
      {head + "\"kc_case\": \"c\", \"kc_backend\": \"b\"}], \"kc_tables\": [{\"rows\": [1]}]}",
       "r.json: kc_tables[0].rows[0]: not a list"},
  };
  for (const Bad& b : bad) {
    auto run = parse_bench_json(b.text, "r.json");
    ASSERT_FALSE(run.ok()) << b.text;
    EXPECT_NE(run.status().message().find(b.message), std::string::npos) << run.status().message();
  }
}

TEST(BenchJsonKc, OnlyObjectsWithABenchmarksListAreBenchJson) {
  EXPECT_TRUE(is_bench_json(synthetic_json({})));
  EXPECT_FALSE(is_bench_json("{\"summary\": {}, \"results\": []}"));  // a kcheck run --report
  EXPECT_FALSE(is_bench_json("not json {"));
}

TEST(BenchJsonKc, GoogleBenchmarkRunsGetSamplesAndTheirSpread) {
  const std::string text =
      "{\"context\": {\"host_name\": \"vm\", \"num_cpus\": 2, \"mhz_per_cpu\": 2596}, \"benchmarks\": [\n"
      "{\"name\": \"BM_A/real_time_median\", \"run_name\": \"BM_A/real_time\", \"run_type\": \"aggregate\", "
      "\"aggregate_name\": \"median\", \"real_time\": 40, \"time_unit\": \"ms\"},\n"
      "{\"name\": \"BM_A/real_time_stddev\", \"run_name\": \"BM_A/real_time\", \"run_type\": \"aggregate\", "
      "\"aggregate_name\": \"stddev\", \"real_time\": 2, \"time_unit\": \"ms\"}]}";
  auto run = parse_bench_json(text, "old.json");
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  EXPECT_EQ(run->format, RunFormat::kGoogleBenchmark);
  EXPECT_EQ(run->machine, "vm, 2 cpus at 2596 MHz");
  ASSERT_EQ(run->samples.size(), 1u);
  EXPECT_EQ(run->samples[0].chart_key(), "BM_A");
  EXPECT_EQ(run->samples[0].backend, "kcheck-bench");
  EXPECT_DOUBLE_EQ(run->samples[0].seconds, 0.040);
  EXPECT_DOUBLE_EQ(run->samples[0].spread, 0.05);
}

}  // namespace
}  // namespace kc::bench
