// The checkpoint schedule (stack_schedule.h) as a backend's resident runner runs it:
// run_stack() hands the stack to a ResidentStackRunner, a runtime whose values are
// move-only buffers with counted bytes (support/counted_runner.h, as device buffers
// are) gets the executor's gradients and bookkeeping, and the checkpoint check judges
// the memory it measured: a runner that never gives freed activations back saves
// nothing and is caught.
#include <gtest/gtest.h>

#include <string>

#include "kc/case_io.h"
#include "kc/runner.h"
#include "stack/stack_exec.h"
#include "support/counted_runner.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

class CountedRunner final : public test::DelegatingBackend, public ResidentStackRunner {
 public:
  CountedRunner(std::string name, bool leak) : DelegatingBackend(std::move(name)), leak_(leak) {}
  StackRun run_stack_resident(const std::vector<StackLayer>& layers, const StackInputs& in,
                              const StackRunOptions& options) override {
    return test::run_counted(reference(), layers, in, options,
                             leak_ ? test::CountedBug::kLeak : test::CountedBug::kNone);
  }

 private:
  bool leak_;
};

Case deep_case(const char* checkpoint) {
  auto cases = parse_cases(std::string("{op: stack, dtype: f64, input: {batch: 1, channels: 2, spatial: [12, 12]}, "
                                       "stack: {depth: 9, layer: {conv: {out_channels: 2, kernel: [3, 3], padding: "
                                       "same, bias: true}, relu: true}, checkpoint: ") +
                               checkpoint + "}, data: {seed: 5}, deterministic: true}",
                           "schedule.yaml");
  EXPECT_EQ(cases.size(), 1u);
  return *cases.at(0).c;
}

TEST(StackSchedule, ResidentRunnerGetsTheExecutorsGradientsAndBookkeeping) {
  const Case c = deep_case("sqrt");
  auto layers = stack_layers(c);
  ASSERT_TRUE(layers.ok());
  auto in = make_stack_inputs(c, *layers);
  ASSERT_TRUE(in.ok());
  auto ref = make_reference_backend();
  CountedRunner counted("counted", false);
  const StackRunOptions opt{CheckpointPolicy{CheckpointKind::kSqrt, 0}, DType::kF64};
  const StackRun host = run_stack(*ref, *layers, *in, opt);
  const StackRun resident = run_stack(counted, *layers, *in, opt);
  ASSERT_TRUE(host.status.ok() && resident.status.ok()) << resident.status.to_string();
  EXPECT_EQ(host.measured_peak_bytes, -1);
  EXPECT_GE(resident.measured_peak_bytes, resident.peak_bytes);                      // its records are counted buffers
  const CheckpointPlan plan = plan_checkpoints(*layers, opt.checkpoint, opt.dtype);  // the formulas, not the schedule
  EXPECT_EQ(resident.recomputations, plan.recomputations);
  EXPECT_EQ(resident.peak_bytes, plan.peak_bytes);
  EXPECT_TRUE(bitwise_equal(resident.y, host.y));
  EXPECT_TRUE(bitwise_equal(resident.dx, host.dx));
  for (size_t l = 0; l < host.dw.size(); ++l) {
    EXPECT_TRUE(bitwise_equal(resident.dw[l], host.dw[l])) << l;
    EXPECT_TRUE(bitwise_equal(resident.db[l], host.db[l])) << l;
  }
}

TEST(StackSchedule, CheckpointJudgesMeasuredMemoryAndCatchesALeak) {
  const Case c = deep_case("none");
  CountedRunner good("counted", false), leaky("leaky", true);
  const CheckResult* ok = nullptr;
  const CaseResult r_good = check_case(c, good);
  ok = find_check(r_good, "checkpoint");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->disposition, Disposition::kPassed) << ok->message;
  EXPECT_NE(ok->message.find("measured saving of sqrt"), std::string::npos) << ok->message;
  const CaseResult r_leak = check_case(c, leaky);
  const CheckResult* bad = find_check(r_leak, "checkpoint");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->disposition, Disposition::kFailed) << bad->message;
  EXPECT_NE(bad->message.find("sqrt saved no measured memory"), std::string::npos) << bad->message;
}

// The checkpoint check's result on one inline stack case.
CheckResult checkpoint_of(const std::string& yaml, Backend& backend) {
  auto cases = parse_cases(yaml, "stack.yaml");
  EXPECT_EQ(cases.size(), 1u);
  const CaseResult r = check_case(*cases.at(0).c, backend);
  const CheckResult* cp = find_check(r, "checkpoint");
  EXPECT_TRUE(cp) << r.message;
  return cp ? *cp : CheckResult{};
}

// Three 1-channel layers on length 4: sqrt's plan saves 16 bytes of records, less than
// one layer's gradients in flight, and both policies peak at 96 measured bytes (a case
// the stack generator makes first). A right runner passes; the saving is not required.
TEST(StackSchedule, ASavingWithinOneLayersGradientsInFlightIsNotRequired) {
  CountedRunner good("counted", false);
  const CheckResult cp = checkpoint_of(
      "{op: stack, dtype: f64, input: {batch: 1, channels: 1, spatial: [4]}, stack: {depth: 3, layer: {conv: "
      "{out_channels: 1, kernel: [2], padding: [[0, 0]]}}, checkpoint: none}, data: {seed: 0}, deterministic: true}",
      good);
  EXPECT_EQ(cp.disposition, Disposition::kPassed) << cp.message;
  EXPECT_NE(cp.message.find("measured saving of sqrt 0 bytes (the plan's 16, less at most"), std::string::npos)
      << cp.message;
}

// A runner that keeps every freed buffer: on a 3-D stack whose planned saving is within
// one layer's gradients in flight, its measured loss is larger than they explain.
TEST(StackSchedule, ALeakLargerThanTheGradientsInFlightIsCaughtOnASmallSaving) {
  const std::string yaml =
      "{op: stack, dtype: f64, input: {batch: 1, channels: 2, spatial: [6, 8, 8]}, stack: {depth: 4, layer: {conv: "
      "{out_channels: 3, kernel: [3, 3, 3], padding: same, bias: true}, relu: true}, checkpoint: sqrt}, data: {seed: "
      "33}, deterministic: true}";
  CountedRunner good("counted", false), leaky("leaky", true);
  const CheckResult ok = checkpoint_of(yaml, good);
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << ok.message;
  const CheckResult bad = checkpoint_of(yaml, leaky);
  EXPECT_EQ(bad.disposition, Disposition::kFailed) << bad.message;
  EXPECT_NE(bad.message.find("sqrt saved no measured memory"), std::string::npos) << bad.message;
}

}  // namespace
}  // namespace kc
