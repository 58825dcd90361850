// The timing loop: budgets in time and count, rotation over instances, the op's own
// clock preferred to the host's, errors passed on.
#include "bench/timing.h"

#include <gtest/gtest.h>

namespace kc::bench {
namespace {

// A prepared op whose every run "takes" a fixed time by its own clock.
class FixedOp final : public PreparedOp {
 public:
  explicit FixedOp(double seconds, int fail_at = -1) : seconds_(seconds), fail_at_(fail_at) {}
  Status run() override {
    if (runs_++ == fail_at_) return internal_error("launch failed");
    return ok_status();
  }
  std::optional<double> last_seconds() const override { return seconds_; }
  StatusOr<PreparedOutputs> outputs() const override { return PreparedOutputs{}; }
  int runs() const { return runs_; }

 private:
  double seconds_;
  int fail_at_;
  int runs_ = 0;
};

TEST(Timing, RunsUntilTimeAndCountAreBothReached) {
  FixedOp op(0.01);
  PreparedOp* ops[] = {&op};
  StatusOr<Timing> t = time_runs(ops, {0.05, 3, 1000, 1});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->samples.size(), 5u);  // 5 x 10 ms reach 50 ms
  EXPECT_EQ(op.runs(), 6);           // and one warm-up
  EXPECT_DOUBLE_EQ(t->stats.median, 0.01);
}

TEST(Timing, MinimumCountWinsOverAShortBudget) {
  FixedOp op(1.0);
  PreparedOp* ops[] = {&op};
  StatusOr<Timing> t = time_runs(ops, {0.1, 4, 1000, 0});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->samples.size(), 4u);
}

TEST(Timing, MaximumCountCapsTheRuns) {
  FixedOp op(1e-6);
  PreparedOp* ops[] = {&op};
  StatusOr<Timing> t = time_runs(ops, {10.0, 1, 7, 0, 100.0});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->samples.size(), 7u);
}

TEST(Timing, TimeCapStopsASlowOpShortOfItsCount) {
  FixedOp op(2.0);
  PreparedOp* ops[] = {&op};
  StatusOr<Timing> t = time_runs(ops, {0.2, 5, 1000, 0, 5.0});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->samples.size(), 3u);  // 6 s of runs pass the 5 s cap
}

TEST(Timing, ColdRotatesThroughEveryInstance) {
  FixedOp a(0.01), b(0.02), c(0.03);
  PreparedOp* ops[] = {&a, &b, &c};
  StatusOr<Timing> t = time_runs(ops, {0.0, 9, 9, 1});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(a.runs(), 4);  // 1 warm-up + 3 timed each
  EXPECT_EQ(b.runs(), 4);
  EXPECT_EQ(c.runs(), 4);
  EXPECT_DOUBLE_EQ(t->stats.median, 0.02);
}

TEST(Timing, AFailingRunIsTheResult) {
  FixedOp op(0.01, 3);
  PreparedOp* ops[] = {&op};
  StatusOr<Timing> t = time_runs(ops, {1.0, 10, 100, 1});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("launch failed"), std::string::npos);
}

TEST(Timing, NoInstanceIsAnError) { EXPECT_FALSE(time_runs({}, {}).ok()); }

}  // namespace
}  // namespace kc::bench
