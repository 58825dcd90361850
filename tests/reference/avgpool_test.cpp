// The reference average pooling: worked examples with PyTorch's values (count_include_pad
// both ways, a ceil-mode window past the padding, a window only in padding, a divisor);
// the fast reference equal to the direct definition bitwise over random geometries
// (ranks 1-3, padding up to past the kernel, same/same_lower/valid, ceil_mode, divisor);
// and the backward as the forward's adjoint (<avg(x), g> = <x, avg'(g)>).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <vector>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/ref/avgpool.h"
#include "kc/shape.h"
#include "kc_direct.h"

namespace {

using kc::Tensor;

kc::AvgPoolGeometry geometry(const kc::Dims& in, kc::AvgPoolParams p) {
  kc::Case c;
  c.dtype = kc::DType::kF64;
  c.input.spatial = in;
  c.op = std::move(p);
  auto g = kc::avgpool_geometry(c);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return g.ok() ? *g : kc::AvgPoolGeometry{};
}

kc::AvgPoolParams params(kc::Dims kernel, kc::Dims stride, int64_t pad, bool ceil, bool include) {
  kc::AvgPoolParams p;
  p.kernel = std::move(kernel);
  p.stride = std::move(stride);
  for (size_t i = 0; i < p.kernel.size(); ++i) p.padding.pairs.push_back({pad, pad});
  p.ceil_mode = ceil;
  p.count_include_pad = include;
  return p;
}

Tensor iota(const kc::Dims& shape) {
  Tensor t = Tensor::zeros(kc::DType::kF64, shape);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i + 1);
  return t;
}

std::vector<double> values(const Tensor& t) { return std::vector<double>(t.data.begin(), t.data.end()); }

TEST(AvgPool, CountIncludePadDividesByTheWindowWithItsPadding) {
  const auto g = geometry({4}, params({3}, {2}, 1, false, true));  // x = 1 2 3 4
  EXPECT_EQ(values(kc::ref::avgpool_forward(g, iota(g.x_shape()))), (std::vector<double>{1.0, 3.0}));
}

TEST(AvgPool, ExcludingPadDividesByTheInputElements) {
  const auto g = geometry({4}, params({3}, {2}, 1, false, false));
  EXPECT_EQ(values(kc::ref::avgpool_forward(g, iota(g.x_shape()))), (std::vector<double>{1.5, 3.0}));
}

TEST(AvgPool, CeilModeOverhangPastThePaddingIsNotCounted) {
  const auto g = geometry({5}, params({2}, {2}, 0, true, true));  // PyTorch: [1.5, 3.5, 5.0]
  EXPECT_EQ(values(kc::ref::avgpool_forward(g, iota(g.x_shape()))), (std::vector<double>{1.5, 3.5, 5.0}));
}

TEST(AvgPool, AWindowOnlyInPaddingIsZeroAndGetsNoGradient) {
  const auto g = geometry({2}, params({1}, {1}, 1, false, true));
  EXPECT_EQ(values(kc::ref::avgpool_forward(g, iota(g.x_shape()))), (std::vector<double>{0.0, 1.0, 2.0, 0.0}));
  const Tensor dx = kc::ref::avgpool_backward(g, iota(g.y_shape()));  // dy = 1 2 3 4
  EXPECT_EQ(values(dx), (std::vector<double>{2.0, 3.0}));
}

TEST(AvgPool, AGivenDivisorReplacesTheCount) {
  kc::AvgPoolParams p = params({2}, {2}, 0, false, true);
  p.divisor = 1;
  const auto g = geometry({4}, p);
  EXPECT_EQ(values(kc::ref::avgpool_forward(g, iota(g.x_shape()))), (std::vector<double>{3.0, 7.0}));
  EXPECT_EQ(values(kc::ref::avgpool_backward(g, iota(g.y_shape()))), (std::vector<double>{1.0, 1.0, 2.0, 2.0}));
}

TEST(AvgPool, TwoDimensionalOverlappingWindowsAddTheirShares) {
  const auto g = geometry({3, 3}, params({2, 2}, {1, 1}, 0, false, true));  // x = 1..9
  EXPECT_EQ(values(kc::ref::avgpool_forward(g, iota(g.x_shape()))), (std::vector<double>{3.0, 4.0, 6.0, 7.0}));
  Tensor dy = Tensor::filled(kc::DType::kF64, g.y_shape(), 4.0);
  EXPECT_EQ(values(kc::ref::avgpool_backward(g, dy)),
            (std::vector<double>{1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0}));
}

// A random valid average-pool case, padding up to one past the kernel (windows only in
// padding), any padding form, ceil_mode, count_include_pad and divisor.
kc::Case random_avgpool_case() {
  const int rank = *rc::gen::inRange(1, 4);
  kc::Case c;
  c.dtype = kc::DType::kF64;
  c.input.batch = *rc::gen::inRange(1, 3);
  c.input.channels = *rc::gen::inRange(1, 3);
  kc::AvgPoolParams p;
  p.padding.kind = *rc::gen::element(kc::PadKind::kExplicit, kc::PadKind::kExplicit, kc::PadKind::kSame,
                                     kc::PadKind::kSameLower, kc::PadKind::kValid);
  for (int i = 0; i < rank; ++i) {
    const int64_t k = *rc::gen::inRange(1, 4);
    c.input.spatial.push_back(*rc::gen::inRange(1, 7));
    p.kernel.push_back(k);
    p.stride.push_back(*rc::gen::inRange(1, 4));
    if (p.padding.kind == kc::PadKind::kExplicit) {
      p.padding.pairs.push_back({*rc::gen::inRange<int64_t>(0, k + 2), *rc::gen::inRange<int64_t>(0, k + 2)});
    }
  }
  if (*rc::gen::inRange(0, 5) == 0) p.stride.clear();
  p.ceil_mode = *rc::gen::arbitrary<bool>();
  p.count_include_pad = *rc::gen::arbitrary<bool>();
  if (*rc::gen::inRange(0, 4) == 0) p.divisor = *rc::gen::inRange<int64_t>(1, 20);
  c.op = p;
  RC_PRE(kc::validate(c).ok());
  return c;
}

Tensor random_tensor(const kc::Dims& shape) {
  const auto n = static_cast<size_t>(kc::element_count(shape));
  const auto codes = *rc::gen::container<std::vector<int>>(n, rc::gen::inRange(-1000, 1000));
  Tensor t = Tensor::zeros(kc::DType::kF64, shape);
  for (size_t i = 0; i < n; ++i) t.data[i] = codes[i] / 7.0;
  return t;
}

RC_GTEST_PROP(AvgPoolProp, FastReferenceEqualsDirectDefinition, ()) {
  const kc::Case c = random_avgpool_case();
  const kc::AvgPoolGeometry g = *kc::avgpool_geometry(c);
  const Tensor x = random_tensor(g.x_shape()), dy = random_tensor(g.y_shape());
  RC_ASSERT(kc::bitwise_equal(kc::ref::avgpool_forward(g, x), kc::ref::direct::avgpool_forward(g, x)));
  RC_ASSERT(kc::bitwise_equal(kc::ref::avgpool_backward(g, dy), kc::ref::direct::avgpool_backward(g, dy)));
}

RC_GTEST_PROP(AvgPoolProp, BackwardIsTheForwardsAdjoint, ()) {
  const kc::Case c = random_avgpool_case();
  const kc::AvgPoolGeometry g = *kc::avgpool_geometry(c);
  const Tensor x = random_tensor(g.x_shape()), dy = random_tensor(g.y_shape());
  const Tensor y = kc::ref::avgpool_forward(g, x), dx = kc::ref::avgpool_backward(g, dy);
  double lhs = 0.0, rhs = 0.0, scale = 0.0;
  for (int64_t i = 0; i < y.size(); ++i) lhs += y[i] * dy[i], scale += std::abs(y[i] * dy[i]);
  for (int64_t i = 0; i < x.size(); ++i) rhs += x[i] * dx[i], scale += std::abs(x[i] * dx[i]);
  RC_ASSERT(std::abs(lhs - rhs) <= 1e-12 * (scale + 1.0));
}

}  // namespace
