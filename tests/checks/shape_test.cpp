// The shape check: an output eroded by the wrong padding is named.
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
#include "support/run_check.h"

namespace kc {
namespace {

using test::small_conv;

// Reports the valid extent of a 3-wide kernel where the case asks for SAME.
test::EditedConvForward valid_for_same() {
  return {"planted.valid_for_same", [](const ConvGeometry&, Tensor& y) { y.shape.back() -= 2; }};
}

TEST(ShapeCheck, NamesErosion) {
  test::EditedConvForward bad = valid_for_same();
  test::expect_check(small_conv(), bad, "shape", Disposition::kFailed, {"eroded by 2"});
}

}  // namespace
}  // namespace kc
