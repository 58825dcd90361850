// The runner: a case that must be refused passes only when refused with its text.
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
#include "kc/report.h"
#include "kc/runner.h"
#include "run/isolate.h"
#include "run/tolerance.h"
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

}  // namespace
}  // namespace kc
