// The host's ceilings: each measured, named and in its unit; dtypes a ceiling has no
// figure for are refused, not guessed.
#include "bench/ceilings.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/fma_peak.h"

namespace kc::bench {
namespace {

TEST(Ceilings, TriadCountsThreeArraysOfDoubles) {
  const Ceiling c = measure_triad(1 << 20, 2, 1);
  EXPECT_EQ(c.name, "host triad");
  EXPECT_FALSE(c.flops);
  EXPECT_GT(c.per_second, 1e8);  // 100 MB/s: any machine that runs the tests
  EXPECT_TRUE(std::isfinite(c.per_second));
}

TEST(Ceilings, EigenGemmInF32AndF64Only) {
  StatusOr<Ceiling> g = measure_eigen_gemm(DType::kF32, 128, 2, 1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->name, "eigen gemm f32");
  EXPECT_EQ(g->dtype, DType::kF32);
  EXPECT_GT(g->per_second, 1e7);
  EXPECT_EQ(measure_eigen_gemm(DType::kBF16, 128, 2, 1).status().code(), StatusCode::kUnimplemented);
}

TEST(Ceilings, FmaPeakInF32AndF64Only) {
  StatusOr<Ceiling> f = measure_fma_peak(DType::kF64, 1);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->name, "host fma peak f64");
  EXPECT_TRUE(f->flops);
  EXPECT_GT(f->per_second, 1e8);
  EXPECT_EQ(measure_fma_peak(DType::kF16, 1).status().code(), StatusCode::kUnimplemented);
}

TEST(Ceilings, HostCacheIsKnown) { EXPECT_GT(host_cache_bytes(), 0); }

}  // namespace
}  // namespace kc::bench
