// The forward check: a correct backend passes, a planted error is located, an all-zero
// reference is MISTRUSTED, never PASSED.
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

// One element of y off by 0.1%.
test::EditedConvForward scaled_forward() {
  return {"planted.scaled_forward", [](const ConvGeometry&, Tensor& y) { y[5] *= 1.001; }};
}

TEST(ForwardCheck, CorrectBackendPassesAndPlantedErrorIsLocated) {
  test::DelegatingBackend correct("planted.none");
  EXPECT_EQ(check_case(small_conv(), correct).disposition, Disposition::kPassed);
  test::EditedConvForward bad = scaled_forward();
  const CaseResult r = check_case(small_conv(), bad);
  const CheckResult* f = find_check(r, "forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->disposition, Disposition::kFailed);
  ASSERT_FALSE(f->worst.empty());
  EXPECT_EQ(f->worst[0].tensor, "y");
  EXPECT_GT(f->max_error_ratio, 1.0);
  EXPECT_EQ(r.disposition, Disposition::kFailed);
}

TEST(ForwardCheck, AllZeroReferenceIsMistrustedNotPassed) {
  Case c = small_conv(false);
  auto geo = conv_geometry(c);
  c.tensors["x"] = Tensor::zeros(DType::kF32, geo->x_shape());  // y == 0 everywhere
  test::DelegatingBackend correct("planted.none");
  const CaseResult r = check_case(c, correct);
  const CheckResult* f = find_check(r, "forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->disposition, Disposition::kMistrusted);
  EXPECT_NE(f->message.find("all zero"), std::string::npos) << f->message;
}

}  // namespace
}  // namespace kc
