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
#include "judge/absolute_pass.h"
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

// conv_bias_relu on `fill: special` in every dtype: relu turns each -inf pre-activation
// into 0, whose terms carry no bound; forward judges those outputs as exactly 0, so a
// right kernel PASSES (not MISTRUSTED) and one that writes anything else there FAILS.
TEST(ForwardCheck, FusedSpecialFillIsJudgedWhereReluMakesMinusInfinityZero) {
  for (DType dtype : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    Case c = test::conv_case({.batch = 2,
                              .channels = 2,
                              .out_channels = 3,
                              .spatial = {6, 6},
                              .kernel = {2, 2},
                              .bias = true,
                              .dtype = dtype});
    c.op = ConvBiasReluParams{std::get<ConvParams>(c.op)};
    c.data = {5, Fill::kSpecial, {}};
    const OpInputs in = *make_inputs(c);
    const OpGeometry geo = *op_geometry(c);
    auto ref = make_reference_backend();
    const OpOutputs o = invoke(*ref, c, geo, in);
    const OpOutputs a = absolute_pass(c, geo, in, o);
    int64_t clipped = -1;
    for (int64_t i = 0; i < o.y.size() && clipped < 0; ++i) {
      if (o.y[i] == 0.0 && std::isinf(a.y[i])) clipped = i;
    }
    ASSERT_GE(clipped, 0) << "no relu(-inf) in this data";
    test::DelegatingBackend correct("planted.none");
    test::expect_check(c, correct, "forward", Disposition::kPassed);
    test::EditedConvForward nonzero("planted.relu_inf",
                                    [clipped](const ConvGeometry&, Tensor& y) { y[clipped] = 1.0; });
    test::expect_check(c, nonzero, "forward", Disposition::kFailed, {"1 of"});
  }
}

}  // namespace
}  // namespace kc
