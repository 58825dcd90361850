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

class ValidForSame : public test::DelegatingBackend {
 public:
  ValidForSame() : DelegatingBackend("planted.valid_for_same") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    y.shape.back() -= 2;  // reports the valid extent of a 3-wide kernel
    return ok_status();
  }
};

TEST(ShapeCheck, NamesErosion) {
  ValidForSame bad;
  const CaseResult r = check_case(small_conv(), bad);
  const CheckResult* s = find_check(r, "shape");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->disposition, Disposition::kFailed);
  EXPECT_NE(s->message.find("eroded by 2"), std::string::npos) << s->message;
}

}  // namespace
}  // namespace kc
