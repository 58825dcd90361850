// relu and conv_bias_relu: values by hand, relu'(0) = 0, NaN propagation, the fused op
// equal to its composition, and its gradients against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kc/ref/activation.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc::ref {
namespace {

TEST(Relu, ValuesAndDerivativeAtZero) {
  Tensor x = Tensor::zeros(DType::kF64, {1, 1, 5});
  x.data = {-2.0, -0.0, 0.0, 1.5, std::numeric_limits<double>::quiet_NaN()};
  const Tensor y = relu(x);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_EQ(y[3], 1.5);
  EXPECT_TRUE(std::isnan(y[4]));
  const Tensor dx = relu_backward(x, Tensor::filled(DType::kF64, x.shape, 3.0));
  EXPECT_EQ(dx.data[0], 0.0);
  EXPECT_EQ(dx.data[2], 0.0);  // relu'(0) = 0
  EXPECT_EQ(dx.data[3], 3.0);
}

ConvGeometry fused_geometry() {
  test::ConvSpec s{.batch = 2,
                   .channels = 3,
                   .out_channels = 4,
                   .spatial = {5, 6},
                   .kernel = {3, 3},
                   .stride = {2, 1},
                   .padding = test::pad_kind(PadKind::kSame),
                   .bias = true};
  return *conv_geometry(test::conv_case(s));
}

TEST(ConvBiasRelu, EqualsTheComposition) {
  const ConvGeometry g = fused_geometry();
  std::mt19937_64 rng(9);
  const Tensor x = test::random_tensor(DType::kF64, g.x_shape(), rng);
  const Tensor w = test::random_tensor(DType::kF64, g.w_shape(), rng);
  const Tensor b = test::random_tensor(DType::kF64, g.b_shape(), rng);
  const Tensor y = conv_bias_relu_forward(g, x, w, b);
  const Tensor z = conv_forward(g, x, w, &b);
  int zeros = 0, positives = 0;
  for (int64_t i = 0; i < y.size(); ++i) {
    EXPECT_EQ(y[i], z[i] > 0 ? z[i] : 0.0);
    (z[i] > 0 ? positives : zeros)++;
  }
  EXPECT_GT(zeros, 0);  // the relu acts on this data
  EXPECT_GT(positives, 0);
}

// Ranks 1-3 crossed with the four padding modes.
std::vector<ConvGeometry> fused_geometries() {
  std::vector<ConvGeometry> r;
  const PaddingMode modes[] = {PaddingMode::kZeros, PaddingMode::kReflect, PaddingMode::kReplicate,
                               PaddingMode::kCircular};
  for (int i = 0; i < 4; ++i) {
    r.push_back(*conv_geometry(test::conv_case({.channels = 2,
                                                .out_channels = 3,
                                                .spatial = {9},
                                                .kernel = {3},
                                                .padding = test::explicit_pad({{2, 1}}),
                                                .mode = modes[i],
                                                .bias = true})));
    r.push_back(*conv_geometry(test::conv_case({.batch = 2,
                                                .channels = 2,
                                                .out_channels = 2,
                                                .spatial = {4, 5},
                                                .kernel = {2, 3},
                                                .stride = {2, 1},
                                                .padding = test::pad_kind(PadKind::kSame),
                                                .mode = modes[i],
                                                .bias = true})));
    r.push_back(*conv_geometry(test::conv_case({.channels = 2,
                                                .out_channels = 2,
                                                .spatial = {3, 4, 3},
                                                .kernel = {2, 2, 2},
                                                .padding = test::explicit_pad({{1, 0}, {1, 1}, {0, 1}}),
                                                .mode = modes[i],
                                                .bias = true})));
  }
  return r;
}

TEST(ConvBiasRelu, GradientsMatchFiniteDifferencesEveryRankAndPaddingMode) {
  int checked = 0, compared = 0;
  for (const ConvGeometry& g : fused_geometries()) {
    std::mt19937_64 rng(300 + checked++);
    const Tensor x = test::random_tensor(DType::kF64, g.x_shape(), rng);
    const Tensor w = test::random_tensor(DType::kF64, g.w_shape(), rng);
    const Tensor b = test::random_tensor(DType::kF64, g.b_shape(), rng);
    const Tensor gy = test::random_tensor(DType::kF64, g.y_shape(), rng);
    const double h = 1e-7;
    double closest = 1.0;  // no pre-activation within reach of the kink for this step
    for (double v : conv_forward(g, x, w, &b).data) closest = std::min(closest, std::abs(v));
    if (closest < 1e-5) continue;
    ++compared;
    const ConvGrads gr = conv_bias_relu_backward(g, x, w, b, gy);
    auto loss_x = [&](const Tensor& t) { return test::dot(conv_bias_relu_forward(g, t, w, b), gy); };
    auto loss_w = [&](const Tensor& t) { return test::dot(conv_bias_relu_forward(g, x, t, b), gy); };
    EXPECT_LT(test::max_abs_diff(gr.dx, test::numeric_gradient(loss_x, x, h)), 1e-6) << checked;
    EXPECT_LT(test::max_abs_diff(gr.dw, test::numeric_gradient(loss_w, w, h)), 1e-6) << checked;
  }
  EXPECT_EQ(checked, 12);
  EXPECT_GE(compared, 10);  // kinks may exclude a geometry, not the test
}

TEST(ConvBiasRelu, GradientsMatchFiniteDifferencesAwayFromKinks) {
  const ConvGeometry g = fused_geometry();
  std::mt19937_64 rng(21);
  const Tensor x = test::random_tensor(DType::kF64, g.x_shape(), rng);
  const Tensor w = test::random_tensor(DType::kF64, g.w_shape(), rng);
  const Tensor b = test::random_tensor(DType::kF64, g.b_shape(), rng);
  const Tensor gy = test::random_tensor(DType::kF64, g.y_shape(), rng);
  const double h = 1e-7;
  // Precondition: no pre-activation within reach of the kink at 0 for this step.
  const Tensor z = conv_forward(g, x, w, &b);
  double closest = 1.0;
  for (double v : z.data) closest = std::min(closest, std::abs(v));
  ASSERT_GT(closest, 1e-4);
  const ConvGrads gr = conv_bias_relu_backward(g, x, w, b, gy);
  auto loss_x = [&](const Tensor& t) { return test::dot(conv_bias_relu_forward(g, t, w, b), gy); };
  auto loss_w = [&](const Tensor& t) { return test::dot(conv_bias_relu_forward(g, x, t, b), gy); };
  auto loss_b = [&](const Tensor& t) { return test::dot(conv_bias_relu_forward(g, x, w, t), gy); };
  EXPECT_LT(test::max_abs_diff(gr.dx, test::numeric_gradient(loss_x, x, h)), 1e-6);
  EXPECT_LT(test::max_abs_diff(gr.dw, test::numeric_gradient(loss_w, w, h)), 1e-6);
  EXPECT_LT(test::max_abs_diff(gr.db, test::numeric_gradient(loss_b, b, h)), 1e-6);
  EXPECT_GT(test::max_abs(gr.dw), 0.1);
}

}  // namespace
}  // namespace kc::ref
