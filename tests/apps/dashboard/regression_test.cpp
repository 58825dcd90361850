// Regressions against the previous run of the same machine (a slowdown inside the larger
// spread, or under the 5% floor, is not flagged; one beyond both is), machines kept
// apart, and the verdict of --check on the latest run of each machine.
#include <gtest/gtest.h>

#include "bench_json.h"
#include "history.h"
#include "regression.h"
#include "synthetic_run.h"
#include "verdict.h"

namespace kc::bench {
namespace {

BenchRun parse(const SyntheticRun& r) {
  auto run = parse_bench_json(synthetic_json(r), r.machine + "-" + r.date + ".json");
  EXPECT_TRUE(run.ok()) << run.status().to_string();
  return *run;
}

// A run one day after `r` with mykern at `ms` and the spread `spread`.
SyntheticRun later(SyntheticRun r, double ms, double spread) {
  r.date = "2026-11-21T10:00:00+00:00";
  r.commit = std::string(40, 'b');
  r.entries[0].ms = ms;
  r.entries[0].spread = spread;
  return r;
}

TEST(Regression, ASlowdownInsideTheSpreadIsNotFlaggedOneOutsideIs) {
  const SyntheticRun base{.entries = {{"mykern", 1.0, 0.10}, {"onednn", 1.0, 0.02}}};
  const auto inside = compare_runs(parse(base), parse(later(base, 1.08, 0.03)));  // +8% < 10% spread
  ASSERT_EQ(inside.size(), 2u);
  EXPECT_NEAR(inside[0].change, 0.08, 1e-9);
  EXPECT_NEAR(inside[0].threshold, 0.10, 1e-12);  // the larger of the two spreads
  EXPECT_FALSE(inside[0].regression);
  const auto outside = compare_runs(parse(base), parse(later(base, 1.15, 0.03)));  // +15% > 10%
  EXPECT_TRUE(outside[0].regression);
  EXPECT_FALSE(outside[1].regression);                                                   // onednn unchanged
  EXPECT_FALSE(compare_runs(parse(base), parse(later(base, 0.5, 0.03)))[0].regression);  // faster
}

TEST(Regression, TightSpreadsStillLeaveTheFloor) {
  const SyntheticRun base{.entries = {{"mykern", 1.0, 0.01}}};
  EXPECT_FALSE(compare_runs(parse(base), parse(later(base, 1.04, 0.01)))[0].regression);
  const auto c = compare_runs(parse(base), parse(later(base, 1.06, 0.01)));
  EXPECT_NEAR(c[0].threshold, kRegressionFloor, 1e-12);
  EXPECT_TRUE(c[0].regression);
}

TEST(Regression, MachinesAreKeptApart) {
  const SyntheticRun a{.entries = {{"mykern", 1.0, 0.01}}};
  SyntheticRun b = later(a, 5.0, 0.01);  // five times slower, on another machine
  b.machine = "box-b";
  std::vector<BenchRun> runs = {parse(a), parse(b)};
  EXPECT_TRUE(compare_runs(runs[0], runs[1]).empty());
  const auto machines = group_by_machine(runs);
  ASSERT_EQ(machines.size(), 2u);
  EXPECT_EQ(machines[0].runs.size(), 1u);
  EXPECT_TRUE(judge(runs).ok());               // each machine's latest run has no previous one
  runs.push_back(parse(later(a, 1.5, 0.01)));  // box-a again: compared with box-a's run only
  order_runs(runs);
  const Verdict v = judge(runs);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_NE(v.reasons[0].find("on box-a: regression: c / conv_forward / warm f32 mykern +50.0%"), std::string::npos)
      << v.reasons[0];
}

TEST(Verdict, MissedTargetsFailedRechecksAndFailuresFailTheLatestRunOnly) {
  SyntheticRun missed{.target_met = false};
  EXPECT_NE(judge({parse(missed)}).reasons.at(0).find("target missed: mykern / onednn"), std::string::npos);
  SyntheticRun bad_recheck{.entries = {{"mykern", 1.0, 0.02, "dx: 3 elements beyond tolerance"}}};
  EXPECT_NE(judge({parse(bad_recheck)}).reasons.at(0).find("re-check failed"), std::string::npos);
  SyntheticRun failed{.failures = 2};
  EXPECT_NE(judge({parse(failed)}).reasons.at(0).find("2 failure(s) recorded"), std::string::npos);
  // An old miss, fixed by the latest run of the machine, no longer fails.
  EXPECT_TRUE(judge({parse(missed), parse(later(SyntheticRun{}, 1.0, 0.02))}).ok());
}

}  // namespace
}  // namespace kc::bench
