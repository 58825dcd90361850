// The runner: a case that must be refused passes only when refused with its text; a case
// whose op the backend turns down after supports() accepted it is SKIPPED, never PASSED.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <string>
#include <thread>

#include <Eigen/Core>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "checks/small_cases.h"
#include "judge/tolerance.h"
#include "kc/report.h"
#include "kc/runner.h"
#include "run/isolate.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"
#include "support/f32_direct.h"

namespace kc {
namespace {

using test::small_conv;

TEST(Runner, ExpectedErrorRules) {
  auto ref = make_reference_backend();
  LoadedCase refused{
      "f.yaml", 3, invalid_argument("conv.groups: 2 does not divide input.channels 3"), {false, "does not divide"}};
  EXPECT_EQ(check_loaded(refused, *ref).disposition, Disposition::kPassed);
  refused.expect.error = "something else";
  EXPECT_EQ(check_loaded(refused, *ref).disposition, Disposition::kFailed);
  refused.expect = {};
  EXPECT_EQ(check_loaded(refused, *ref).disposition, Disposition::kInvalid);
  LoadedCase accepted{"f.yaml", 1, small_conv(), {false, "does not divide"}};
  EXPECT_EQ(check_loaded(accepted, *ref).disposition, Disposition::kFailed);
  // The expected text is matched against the reason, not the location before it: a
  // refusal for another reason on the expected line does not pass.
  LoadedCase located{
      "f.yaml", 3, invalid_argument("f.yaml:3: conv.groups: 2 does not divide input.channels 3"), {false, "f.yaml:3"}};
  EXPECT_EQ(check_loaded(located, *ref).disposition, Disposition::kFailed);
  located.expect.error = "conv.groups: 2 does not";
  EXPECT_EQ(check_loaded(located, *ref).disposition, Disposition::kPassed);
}

// supports() says yes, then every call returns unimplemented: before this rule `shape`
// passed on the forward's absence and the case was PASSED with nothing checked.
class AcceptsThenRefuses final : public test::DelegatingBackend {
 public:
  AcceptsThenRefuses() : DelegatingBackend("accepts_then_refuses") {}
  Status conv_forward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, Tensor&) override {
    return unimplemented("no kernel for this geometry");
  }
  Status maxpool_forward(const PoolGeometry&, const Tensor&, Tensor&, IndexTensor*) override {
    return unimplemented("no kernel for this geometry");
  }
};

TEST(Runner, AnOpUnimplementedAfterSupportsAcceptedIsSkippedWithTheReason) {
  AcceptsThenRefuses b;
  for (const Case& c : {small_conv(), test::pool_case({1, 2, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {}})}) {
    const CaseResult r = check_case(c, b);
    EXPECT_EQ(r.disposition, Disposition::kSkipped) << r.message;
    EXPECT_NE(r.message.find("its forward returned"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("no kernel for this geometry"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("after supports() accepted it"), std::string::npos) << r.message;
    Case only_shape = c;
    only_shape.checks = {"shape"};
    EXPECT_EQ(check_case(only_shape, b).disposition, Disposition::kSkipped);
  }
}

}  // namespace
}  // namespace kc
