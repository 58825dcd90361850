// The seeds' tables pair entries by geometry: fused with the bare conv of the same shape,
// training with inference of the same pool, a 3-D family across resolutions (flagging a
// lower resolution that holds more), deterministic with atomic dw.
#include "bench/tables.h"

#include <gtest/gtest.h>

namespace kc::bench {
namespace {

BenchEntry timed(const std::string& op, const std::string& geometry, double seconds) {
  BenchEntry e;
  e.case_name = geometry + " " + op;
  e.backend = "b";
  e.mode = "warm";
  e.op = op;
  e.geometry = geometry;
  e.stats = summarize({seconds});
  return e;
}

// A copy: seed_tables() returns its tables by value.
Table table(const std::vector<Table>& ts, const std::string& key) {
  for (const Table& t : ts)
    if (t.key == key) return t;
  throw std::runtime_error("no table " + key);
}

TEST(Tables, FusedPairsWithTheBareConvOfItsGeometry) {
  std::vector<BenchEntry> v = {timed("fused_forward", "g1", 0.011), timed("conv_forward", "g1", 0.010),
                               timed("conv_forward", "g2", 0.001)};
  v[0].y_bytes = 1 << 20;
  const Table t = table(seed_tables(v), "fused");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][6], "1.10");  // fused / bare
}

TEST(Tables, FusedBackwardSumsTheSplitOps) {
  std::vector<BenchEntry> v = {timed("fused_backward", "g", 0.03), timed("conv_backward_data", "g", 0.01),
                               timed("conv_backward_weight", "g", 0.01), timed("conv_backward_bias", "g", 0.01)};
  const Table t = table(seed_tables(v), "fused");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][5], "30.000");  // bare ms
}

TEST(Tables, PoolTrainingAgainstInference) {
  std::vector<BenchEntry> v = {timed("pool_inference", "p", 0.002), timed("pool_training", "p", 0.003)};
  v[1].held_bytes = 2 << 20;
  const Table t = table(seed_tables(v), "pool");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][5], "1.50");
  EXPECT_EQ(t.rows[0][6], "2.00");
}

TEST(Tables, Conv3dFlagsALowerResolutionThatHoldsMore) {
  std::vector<BenchEntry> v;
  for (auto [res, act, ws] : {std::tuple{"16x16x16", 1e6, 9e6}, std::tuple{"32x32x32", 8e6, 0.0}}) {
    BenchEntry e = timed("conv_forward", std::string("f in ") + res, 0.01);
    e.family = "f", e.resolution = res, e.spatial_rank = 3, e.activation_bytes = act;
    e.held_bytes = static_cast<int64_t>(act), e.workspace_bytes = static_cast<int64_t>(ws);
    v.push_back(e);
  }
  const Table t = table(seed_tables(v), "conv3d");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_NE(t.rows[0][7].find("costs more than 32x32x32"), std::string::npos) << t.rows[0][7];
  EXPECT_EQ(t.rows[1][7], "-");
}

TEST(Tables, AtomicDwRowsOnlyWhereOffered) {
  std::vector<BenchEntry> v = {timed("conv_backward_weight", "g", 0.01)};
  EXPECT_TRUE(table(seed_tables(v), "atomic_dw").rows.empty());
  EXPECT_FALSE(table(seed_tables(v), "atomic_dw").note.empty());
  v.push_back(timed("conv_backward_weight_atomic", "g", 0.005));
  EXPECT_EQ(table(seed_tables(v), "atomic_dw").rows.at(0)[5], "0.50");
}

TEST(Tables, CheckpointRelativeToNoCheckpointing) {
  BenchEntry none = timed("stack_step[none]", "s", 0.1), sqrt = timed("stack_step[sqrt]", "s", 0.13);
  none.case_name = sqrt.case_name = "s";
  none.activation_peak_bytes = 4e6, sqrt.activation_peak_bytes = 1e6;
  const Table t = table(seed_tables({none, sqrt}), "checkpoint");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1][2], "sqrt");
  EXPECT_EQ(t.rows[1][4], "1.30");
  EXPECT_EQ(t.rows[1][6], "0.25");
}

}  // namespace
}  // namespace kc::bench
