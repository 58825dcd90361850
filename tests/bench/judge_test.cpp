// The run-wide figures: the roofline fraction (above 1 flagged as a measurement bug, a
// transform's saving allowed), the memory ceiling used only where data leave the cache,
// the ratio to the peer, and the targets.
#include "bench/judge.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace kc::bench {
namespace {

std::vector<Ceiling> ceilings() {
  Ceiling gemm{"eigen gemm f32", "cpu", true, DType::kF32, 100e9, ""};
  Ceiling gemm64{"eigen gemm f64", "cpu", true, DType::kF64, 50e9, ""};
  Ceiling triad{"host triad", "cpu", false, std::nullopt, 10e9, ""};
  Ceiling gpu{"d2d copy", "gpu", false, std::nullopt, 3000e9, ""};
  return {gemm, gemm64, triad, gpu};
}

BenchEntry entry(const std::string& backend, double seconds, double flops, double bytes, const std::string& mode) {
  BenchEntry e;
  e.case_name = "c";
  e.backend = backend;
  e.op = "conv_forward";
  e.mode = mode;
  e.dtype = e.compute = DType::kF32;
  e.stats = summarize({seconds});
  e.flops = flops;
  e.bytes = bytes;
  e.geometry = "conv f32 N1 C1 K1 G1 window";
  return e;
}

TEST(Judge, ComputeBoundFractionIsTheGemmShare) {
  std::vector<BenchEntry> v = {entry("onednn", 0.02, 1e9, 1e6, "warm")};
  judge_entries(v, ceilings());
  EXPECT_NEAR(v[0].fraction, 0.5, 1e-12);  // 50 GFLOP/s of 100
  EXPECT_EQ(v[0].ceiling, "eigen gemm f32");
  EXPECT_FALSE(v[0].fraction_over_one);
}

TEST(Judge, MemoryCeilingBoundsColdEntriesOnly) {
  std::vector<BenchEntry> v = {entry("x", 0.05, 1e6, 1e9, "cold"), entry("x", 0.05, 1e6, 1e9, "warm"),
                               entry("x", 0.05, 1e6, 1e9, "cold")};
  for (BenchEntry& e : v) e.cache_bytes = 1 << 20, e.held_bytes = 1 << 19, e.instances = 5;
  v[1].case_name = "other";
  v[2].case_name = "few", v[2].instances = 3;  // 1.5 MiB rotated: may still hit the 1 MiB cache
  judge_entries(v, ceilings());
  EXPECT_NEAR(v[0].fraction, 2.0, 1e-9);  // 1 GB in 50 ms is 20 GB/s against a 10 GB/s triad
  EXPECT_TRUE(v[0].fraction_over_one);
  EXPECT_EQ(v[0].ceiling, "host triad");
  EXPECT_FALSE(v[1].fraction_over_one);  // in cache: no memory ceiling we measure
  EXPECT_FALSE(v[2].fraction_over_one);
}

TEST(Judge, FasterThanTheGemmFailsUnlessATransformExplainsIt) {
  std::vector<BenchEntry> v = {entry("x", 0.005, 1e9, 0, "warm"), entry("y", 0.005, 1e9, 0, "warm")};
  v[1].transform_saving = 2.25;
  judge_entries(v, ceilings());
  EXPECT_TRUE(v[0].fraction_over_one);  // 200 GFLOP/s of 100
  EXPECT_FALSE(v[1].fraction_over_one);
  EXPECT_NEAR(v[1].fraction, 2.0 / 2.25, 1e-12);
}

TEST(Judge, AtTheCeilingWithinItsNoiseIsNotABug) {
  // 109 and 112 GFLOP/s against a 100 GFLOP/s GEMM: inside and just outside the 10%.
  std::vector<BenchEntry> v = {entry("x", 1.0 / 109, 1e9, 0, "warm"), entry("y", 1.0 / 112, 1e9, 0, "warm")};
  judge_entries(v, ceilings());
  EXPECT_FALSE(v[0].fraction_over_one) << v[0].fraction;
  EXPECT_TRUE(v[1].fraction_over_one) << v[1].fraction;
}

TEST(Judge, SixteenBitComputeMayUseTheF32Gemm) {
  std::vector<BenchEntry> v = {entry("x", 0.02, 1e9, 0, "warm")};
  v[0].compute = DType::kBF16;
  judge_entries(v, ceilings());
  EXPECT_EQ(v[0].ceiling, "eigen gemm f32");
}

TEST(Judge, RatioToPeerIsThePeersTimeOverOurs) {
  std::vector<BenchEntry> v = {entry("onednn", 0.01, 1e9, 0, "warm"), entry("mine", 0.04, 1e9, 0, "warm")};
  judge_entries(v, ceilings());
  EXPECT_EQ(v[1].peer, "onednn");
  EXPECT_NEAR(v[1].ratio_to_peer, 0.25, 1e-12);
  EXPECT_TRUE(v[0].peer.empty());
}

TEST(Judge, ReferenceIsComparedWithItsF64Gemm) {
  std::vector<BenchEntry> v = {entry("reference", 0.1, 1e9, 0, "warm")};
  v[0].compute = DType::kF64;
  judge_entries(v, ceilings());
  EXPECT_NEAR(v[0].ratio_to_peer, 10e9 / 50e9, 1e-12);
}

TEST(Judge, TargetsReportMissesAndFailures) {
  std::vector<BenchEntry> v = {entry("onednn", 0.04, 1e9, 0, "warm"), entry("x", 0.005, 1e9, 0, "warm")};
  v[1].recheck_failed = true;
  std::vector<Ceiling> cs = ceilings();
  cs.push_back({"onednn gemm f32", "cpu", true, DType::kF32, 80e9, ""});
  judge_entries(v, cs);
  const std::vector<TargetResult> t = judge_targets(v, cs);
  auto find = [&](const std::string& key) {
    for (const TargetResult& r : t)
      if (r.key == key) return r;
    ADD_FAILURE() << key;
    return TargetResult{};
  };
  EXPECT_NEAR(find("onednn_conv_vs_gemm").value, 25.0 / 80.0, 1e-12);
  EXPECT_FALSE(find("onednn_conv_vs_gemm").met);
  EXPECT_FALSE(find("rechecked").met);
  EXPECT_FALSE(find("ceiling_fraction").met);
}

TEST(Judge, GpuTargetsCompareCudaWithItsTwinsAndPeers) {
  std::vector<BenchEntry> v;
  for (auto [backend, op, seconds] : {std::tuple{"cuda", "conv_forward", 0.01},
                                      {"cudnn", "conv_forward", 0.002},
                                      {"cuda", "conv_backward_data", 0.0056},
                                      {"cudnn", "conv_backward_data", 0.002},
                                      {"cuda", "fused_forward", 0.0102},
                                      {"cuda", "pool_inference", 0.001},
                                      {"cuda", "pool_training", 0.0013}}) {
    BenchEntry e = entry(backend, seconds, 1e9, 1e9, "warm");
    e.op = op, e.device = "gpu", e.dtype = e.compute = DType::kBF16;
    e.file = "cases/bench/gpu/resnet50_3x3.yaml";
    v.push_back(e);
  }
  std::vector<Ceiling> cs = {{"d2d copy", "gpu", false, std::nullopt, 2000e9, ""}};
  judge_entries(v, cs);
  std::vector<TargetResult> t;
  gpu_targets(v, cs, t);
  std::map<std::string, TargetResult> by;
  for (const TargetResult& r : t) by[r.key] = r;
  EXPECT_NEAR(by.at("cuda_conv_forward_vs_cudnn").value, 0.2, 1e-12);
  EXPECT_FALSE(by.at("cuda_conv_forward_vs_cudnn").met);
  EXPECT_NEAR(by.at("cuda_conv_backward_data_vs_cudnn").value, 0.002 / 0.0056, 1e-12);  // just over 0.35
  EXPECT_TRUE(by.at("cuda_conv_backward_data_vs_cudnn").met);
  EXPECT_FALSE(by.count("cuda_f32_conv_forward_vs_cudnn"));  // no f32 entry in the run
  EXPECT_NEAR(by.at("cuda_fused_over_conv").value, 1.02, 1e-12);
  EXPECT_TRUE(by.at("cuda_fused_over_conv").met);
  EXPECT_NEAR(by.at("cuda_pool_training_over_inference").value, 1.3, 1e-12);
  EXPECT_FALSE(by.at("cuda_pool_training_over_inference").met);
  EXPECT_NEAR(by.at("cuda_pool_forward_vs_copy").value, 0.5, 1e-12);  // 1 TB/s of 2
  EXPECT_FALSE(by.count("cuda_bias_gradient_vs_copy"));               // no such entry in the run
}

}  // namespace
}  // namespace kc::bench
