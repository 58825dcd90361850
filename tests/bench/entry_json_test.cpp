// A bench entry survives the worker pipe: what entry_json writes, parse_entry_json reads
// back; and the written object is Google Benchmark's (name, run_type, real_time, unit).
#include "bench/entry_json.h"

#include "bench/bench_report.h"

#include <gtest/gtest.h>

namespace kc::bench {
namespace {

TEST(EntryJson, RoundTripKeepsWhatTheWorkerMeasured) {
  BenchEntry e;
  e.case_name = "resnet \"conv2\"";
  e.file = "cases/bench/cpu/resnet50_3x3.yaml";
  e.backend = "onednn";
  e.op = "conv_forward";
  e.mode = "cold";
  e.dtype = DType::kBF16;
  e.compute = DType::kBF16;
  e.algorithm = "brg:avx2";
  e.stats = summarize({0.001, 0.002, 0.004});
  e.flops = 1.5e9;
  e.bytes = 3e6;
  e.held_bytes = 1234, e.workspace_bytes = 56, e.rss_peak_bytes = 789;
  e.recheck = "FAILED: y off";
  e.recheck_failed = true;
  e.geometry = "conv bf16 N2";
  e.spatial_rank = 2;
  e.instances = 7;
  StatusOr<BenchEntry> back = parse_entry_json(entry_json(e));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->name(), e.name());
  EXPECT_EQ(back->dtype, DType::kBF16);
  EXPECT_EQ(back->algorithm, "brg:avx2");
  EXPECT_NEAR(back->stats.median, 0.002, 1e-15);
  EXPECT_NEAR(back->stats.p75, e.stats.p75, 1e-15);
  EXPECT_EQ(back->flops, 1.5e9);
  EXPECT_EQ(back->held_bytes, 1234);
  EXPECT_EQ(back->workspace_bytes, 56);
  EXPECT_EQ(back->rss_peak_bytes, 789);
  EXPECT_TRUE(back->recheck_failed);
  EXPECT_EQ(back->recheck, "FAILED: y off");
  EXPECT_EQ(back->geometry, "conv bf16 N2");
  EXPECT_EQ(back->instances, 7);
}

TEST(EntryJson, WritesGoogleBenchmarkFields) {
  BenchEntry e;
  e.case_name = "c", e.backend = "b", e.op = "o", e.mode = "warm";
  e.stats = summarize({0.5});
  const std::string j = entry_json(e);
  EXPECT_NE(j.find("\"name\": \"c/b/o/warm\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"run_type\": \"iteration\""), std::string::npos);
  EXPECT_NE(j.find("\"real_time\": 500000"), std::string::npos);
  EXPECT_NE(j.find("\"time_unit\": \"us\""), std::string::npos);
}

TEST(EntryJson, ErrorsAreGoogleBenchmarkErrors) {
  BenchEntry e;
  e.error = "prepare: unavailable";
  const std::string j = entry_json(e);
  EXPECT_NE(j.find("\"error_occurred\": true"), std::string::npos);
  EXPECT_EQ(parse_entry_json(j)->error, "prepare: unavailable");
}

TEST(EntryJson, CeilingRoundTrip) {
  Ceiling c{"cublas gemm bf16", "gpu", true, DType::kBF16, 7.5e14, "8192^3, best of 5"};
  StatusOr<Ceiling> back = parse_ceiling_wire(ceiling_wire(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, c.name);
  EXPECT_EQ(back->device, "gpu");
  EXPECT_TRUE(back->flops);
  EXPECT_EQ(back->dtype, DType::kBF16);
  EXPECT_NEAR(back->per_second, c.per_second, 1.0);
}

TEST(EntryJson, ReportCountsErrorsAsFailuresAndListsSkipsApart) {
  BenchResults r;
  BenchEntry ok, failed, skipped;
  ok.case_name = "ok", ok.backend = "b", ok.op = "conv_forward", ok.mode = "warm";
  ok.stats = summarize({0.01});
  failed = ok, failed.case_name = "broken", failed.error = "run: internal: launch failed";
  skipped = ok, skipped.case_name = "refused", skipped.skipped = "no 3-D convs";
  r.entries = {ok, failed, skipped};
  EXPECT_EQ(r.failures(), 1);
  const std::string j = bench_report_json(r, {});
  const size_t skips = j.find("\"kc_skipped\"");
  ASSERT_NE(skips, std::string::npos);
  EXPECT_GT(j.find("refused/b/conv_forward/warm"), skips);  // listed apart, after the benchmarks
  EXPECT_NE(j.find("\"kc_failures\": 1"), std::string::npos);
}

TEST(EntryJson, GarbageIsAnError) { EXPECT_FALSE(parse_entry_json("{not json").ok()); }

}  // namespace
}  // namespace kc::bench
