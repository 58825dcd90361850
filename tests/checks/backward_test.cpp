// The backward check: a bias gradient without the batch sum is caught; a fused relu
// mask may differ only where z is within rounding of 0.
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

// db of sample 0 only: the bias gradient without its sum over the batch.
test::EditedConvBackward bias_gradient_of_sample_zero() {
  return {"planted.db_no_batch_sum", [](const ConvGeometry& g, const Tensor& dy, Tensor&, Tensor&, Tensor* db) {
            const int64_t P = g.spatial.out_count();
            for (int64_t co = 0; co < g.out_channels; ++co) {  // db of sample 0 only
              double s = 0;
              for (int64_t p = 0; p < P; ++p) s += dy[co * P + p];
              (*db)[co] = s;
            }
          }};
}

// conv_bias_relu whose backward decides relu' with its own threshold on z.
class ReluThreshold : public test::DelegatingBackend {
 public:
  explicit ReluThreshold(double t) : DelegatingBackend("planted.relu_threshold"), t_(t) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    Tensor z = Tensor::filled(DType::kF64, g.y_shape(), 0.0);
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, false, z));
    Tensor dz = dy;
    for (int64_t i = 0; i < dz.size(); ++i) dz[i] = relu && z[i] > t_ ? dy[i] : (relu ? 0.0 : dy[i]);
    return reference().conv_backward(g, x, w, b, false, dz, dx, dw, db);
  }

 private:
  double t_;
};

TEST(BackwardCheck, CatchesBiasGradientWithoutBatchSum) {
  test::EditedConvBackward bad = bias_gradient_of_sample_zero();
  test::expect_check(small_conv(), bad, "backward", Disposition::kFailed, {"db"});
}

TEST(BackwardCheck, FusedReluMaskMayDifferOnlyWhereZIsWithinRoundingOfZero) {
  // 1-D k 2, b 0. Sample 0: z[0] = 0.1*1 + (-0.1)*1 = 0 in exact arithmetic but ~1e-18
  // after the f64 roundings of 0.1 (a kernel may get either sign); z[1] = 0.1*1 +
  // (-0.1)*0.5 = 0.05. Sample 1 (x 1, 0.5, 0.25) has z = 0.05 and 0.025, clear of 0, so
  // the ambiguity swamps none of dx, dw and db and a pass is trusted.
  Case c;
  c.dtype = DType::kF64;
  c.input = {2, 1, {3}};
  ConvParams p;
  p.kernel = {2};
  c.op = ConvBiasReluParams{p};
  c.tensors["x"] = Tensor::zeros(DType::kF64, {2, 1, 3});
  c.tensors["x"].data = {1.0, 1.0, 0.5, 1.0, 0.5, 0.25};
  c.tensors["w"] = Tensor::zeros(DType::kF64, {1, 1, 2});
  c.tensors["w"].data = {0.1, -0.1 + 1e-17};
  c.tensors["b"] = Tensor::zeros(DType::kF64, {1});
  c.tensors["dy"] = Tensor::filled(DType::kF64, {2, 1, 2}, 1.0);
  c.checks = {"backward"};
  ReluThreshold tiny(1e-15);  // drops only the ambiguous z[0]
  const CaseResult ok = check_case(c, tiny);
  ASSERT_FALSE(ok.checks.empty());
  EXPECT_EQ(ok.checks[0].disposition, Disposition::kPassed) << ok.checks[0].message;
  EXPECT_NE(ok.checks[0].message.find("either side of relu'"), std::string::npos);
  ReluThreshold wrong(0.06);  // also drops z = 0.05 and 0.025, which are clearly positive
  const CaseResult bad = check_case(c, wrong);
  EXPECT_EQ(bad.checks.at(0).disposition, Disposition::kFailed);
}

}  // namespace
}  // namespace kc
