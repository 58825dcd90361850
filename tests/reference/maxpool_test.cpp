// Unit tests of the reference max pooling (reference/src/maxpool.cpp) against values
// worked by hand (docs/ops.md, "Max pooling"): index convention, tie rules, NaN and -inf, padding,
// ceil_mode, modes, and the backward pass (routing, overlap, finite differences, refusal
// without indices; mass conservation is a property in maxpool_prop.cpp). Known values are
// checked on the fast reference and the direct definition alike, so that neither can
// share a mistake with the other.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "kc/case.h"
#include "kc/ref/maxpool.h"
#include "kc/shape.h"
#include "kc_direct.h"
#include "support/test_support.h"

namespace {

using kc::Dims;
using kc::PoolGeometry;
using kc::Tensor;
using kc::TieRule;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Spec {
  Dims spatial;
  Dims kernel;
  Dims stride;  // empty: equal to the kernel
  std::vector<std::array<int64_t, 2>> pads;
  Dims dilation;
  bool ceil_mode = false;
  TieRule tie = TieRule::kFirst;
  kc::PoolMode mode = kc::PoolMode::kTraining;
  int64_t channels = 1;
};

kc::Case pool_case(const Spec& s) {
  kc::Case c;
  c.name = "maxpool_test";
  c.dtype = kc::DType::kF64;
  c.input = kc::InputSpec{1, s.channels, s.spatial};
  kc::MaxPoolParams p;
  p.kernel = s.kernel;
  p.stride = s.stride;
  p.dilation = s.dilation;
  p.padding = kc::PadSpec{kc::PadKind::kExplicit, s.pads};
  p.ceil_mode = s.ceil_mode;
  p.tie = s.tie;
  p.mode = s.mode;
  c.op = p;
  return c;
}

// Validated geometry; a bad case throws, which gtest reports as a failure of the test.
PoolGeometry geometry(const Spec& s) {
  auto g = kc::pool_geometry(pool_case(s));
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return g.value();
}

Tensor tensor(const Dims& shape, std::vector<double> values) {
  Tensor t = Tensor::zeros(kc::DType::kF64, shape);
  EXPECT_EQ(t.data.size(), values.size()) << "test data does not match " << kc::dims_to_string(shape);
  t.data.assign(values.begin(), values.end());
  return t;
}

// y equal value by value (NaN matches NaN), indices equal, on the fast reference and on
// the direct definition.
void expect_forward(const PoolGeometry& g, const Tensor& x, const std::vector<double>& y,
                    const std::vector<int64_t>& idx) {
  const kc::ref::PoolForward fast = kc::ref::maxpool_forward(g, x);
  const kc::ref::direct::PoolForward direct = kc::ref::direct::maxpool_forward(g, x);
  EXPECT_EQ(fast.y.dtype, kc::DType::kF64);
  EXPECT_EQ(fast.y.shape, g.y_shape());
  ASSERT_TRUE(fast.indices.has_value());
  EXPECT_EQ(fast.indices->shape, g.y_shape());
  ASSERT_EQ(fast.y.data.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) {
      EXPECT_TRUE(std::isnan(fast.y.data[i])) << "fast y[" << i << "]";
      EXPECT_TRUE(std::isnan(direct.y.data[i])) << "direct y[" << i << "]";
    } else {
      EXPECT_EQ(fast.y.data[i], y[i]) << "fast y[" << i << "]";
      EXPECT_EQ(direct.y.data[i], y[i]) << "direct y[" << i << "]";
    }
  }
  EXPECT_EQ(fast.indices->data, idx) << "fast indices";
  EXPECT_EQ(direct.indices.data, idx) << "direct indices";
}

std::vector<int64_t> indices_of(const PoolGeometry& g, const Tensor& x) {
  auto r = kc::ref::maxpool_forward(g, x);
  EXPECT_TRUE(r.indices.has_value());
  return r.indices ? std::vector<int64_t>(r.indices->data.begin(), r.indices->data.end()) : std::vector<int64_t>{};
}

// ---------------------------------------------------------------- known values

TEST(MaxPoolForward, KnownValues2D4x4Kernel2Stride2) {
  const PoolGeometry g = geometry({{4, 4}, {2, 2}, {2, 2}, {}});
  EXPECT_EQ(g.y_shape(), (Dims{1, 1, 2, 2}));
  const Tensor x = tensor({1, 1, 4, 4}, {1, 2, 5, 3,    //
                                         4, 0, 1, 6,    //
                                         7, 8, 2, 2,    //
                                         3, 9, 4, 1});  //
  // Windows: {1,2,4,0} -> 4 at (1,0); {5,3,1,6} -> 6 at (1,3);
  //          {7,8,3,9} -> 9 at (3,1); {2,2,4,1} -> 4 at (3,2). Index ih*4 + iw.
  expect_forward(g, x, {4, 6, 9, 4}, {4, 7, 13, 14});
}

TEST(MaxPoolForward, IndexIsIhTimesWPlusIwOnNonSquarePlane) {
  // H = 3, W = 5, one global window. Max at (ih, iw) = (2, 1): 2*5 + 1 = 11, whereas the
  // transposed convention iw*H + ih would give 5.
  const PoolGeometry g = geometry({{3, 5}, {3, 5}, {}, {}});
  std::vector<double> v(15, 0.0);
  v[11] = 3.0;
  expect_forward(g, tensor({1, 1, 3, 5}, v), {3.0}, {11});
}

TEST(MaxPoolForward, KnownValues1DPaddedOverlapping) {
  // in 8, kernel 3, stride 2, pad [1, 1]: out = (8 + 2 - 3) / 2 + 1 = 4; windows cover
  // input [-1, 1], [1, 3], [3, 5], [5, 7].
  const PoolGeometry g = geometry({{8}, {3}, {2}, {{1, 1}}});
  EXPECT_EQ(g.y_shape(), (Dims{1, 1, 4}));
  const Tensor x = tensor({1, 1, 8}, {3, 1, 4, 1, 5, 9, 2, 6});
  expect_forward(g, x, {3, 4, 9, 9}, {0, 2, 5, 5});
}

TEST(MaxPoolForward, KnownValues1DDilation) {
  // kernel 2, dilation 2, stride 1: window o covers input o and o + 2.
  const PoolGeometry g = geometry({{5}, {2}, {1}, {}, {2}});
  const Tensor x = tensor({1, 1, 5}, {1, 9, 2, 3, 0});
  expect_forward(g, x, {2, 9, 2}, {2, 1, 2});
}

TEST(MaxPoolForward, KnownValues3DTwoChannels) {
  // D, H, W = 2, 2, 3; kernel 2x2x2, stride 1: two windows, over w in {0, 1} and {1, 2}.
  // Index (id*H + ih)*W + iw, relative to each (n, c) plane.
  Spec s{{2, 2, 3}, {2, 2, 2}, {1, 1, 1}, {}};
  s.channels = 2;
  const PoolGeometry g = geometry(s);
  EXPECT_EQ(g.y_shape(), (Dims{1, 2, 1, 1, 2}));
  std::vector<double> v(24, 0.0);
  v[9] = 50;       // channel 0, (1, 1, 0) -> 9, only in window 0
  v[5] = 40;       // channel 0, (0, 1, 2) -> 5, only in window 1
  v[12 + 4] = 7;   // channel 1, (0, 1, 1) -> 4, in both windows
  v[12 + 11] = 6;  // channel 1, (1, 1, 2) -> 11, only in window 1
  expect_forward(g, tensor({1, 2, 2, 2, 3}, v), {50, 40, 7, 7}, {9, 5, 4, 4});
}

TEST(MaxPoolForward, OutputIsF64ForF32Input) {
  const PoolGeometry g = geometry({{4}, {2}, {}, {}});
  Tensor x = tensor({1, 1, 4}, {0.1, 0.2, 0.3, 0.4});
  x.round_to_dtype(kc::DType::kF32);
  const auto r = kc::ref::maxpool_forward(g, x);
  EXPECT_EQ(r.y.dtype, kc::DType::kF64);
  EXPECT_EQ(r.y.data, (std::vector<double>{x[1], x[3]}));
}

TEST(MaxPoolForwardDeathTest, ShapeMismatchIsAProgrammerError) {
  const PoolGeometry g = geometry({{4}, {2}, {}, {}});
  const Tensor wrong = Tensor::zeros(kc::DType::kF64, {1, 1, 5});
  EXPECT_DEATH(kc::ref::maxpool_forward(g, wrong), "KC_INVARIANT");
}

// ---------------------------------------------------------------- ties

TEST(MaxPoolTie, FirstAndLastOnAllEqualWindow) {
  Spec s{{2, 3}, {2, 3}, {}, {}};
  const Tensor x = tensor({1, 1, 2, 3}, std::vector<double>(6, 7.0));
  s.tie = TieRule::kFirst;
  expect_forward(geometry(s), x, {7.0}, {0});
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), x, {7.0}, {5});
}

TEST(MaxPoolTie, ScanOrderIsRowMajorOverKernelOffsets) {
  // Maxima at (0, 1) and (1, 0) of a 2x2 window: row-major scan meets (0, 1) first.
  Spec s{{2, 2}, {2, 2}, {}, {}};
  const Tensor x = tensor({1, 1, 2, 2}, {0, 5, 5, 0});
  s.tie = TieRule::kFirst;
  expect_forward(geometry(s), x, {5}, {1});
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), x, {5}, {2});
}

TEST(MaxPoolTie, LastIgnoresPaddingAfterTheInput) {
  // Window over input [1, 3] where position 3 is padding: last tie is input 2, not 3.
  Spec s{{3}, {3}, {2}, {{1, 1}}, {}};
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), tensor({1, 1, 3}, {2, 2, 2}), {2, 2}, {1, 2});
}

TEST(MaxPoolTie, AnyIsComputedAsFirst) {
  std::mt19937_64 rng(7);
  for (const Dims& sp : {Dims{9}, Dims{5, 6}, Dims{3, 4, 5}}) {
    const Dims k(sp.size(), 3), st(sp.size(), 1);
    Spec s{sp, k, st, std::vector<std::array<int64_t, 2>>(sp.size(), {1, 1})};
    Dims shape{1, 1};
    shape.insert(shape.end(), sp.begin(), sp.end());
    const Tensor x = kc::test::integer_tensor(shape, rng, 0, 1);  // ties everywhere
    s.tie = TieRule::kFirst;
    const auto first = indices_of(geometry(s), x);
    s.tie = TieRule::kLast;
    const auto last = indices_of(geometry(s), x);
    s.tie = TieRule::kAny;
    EXPECT_EQ(indices_of(geometry(s), x), first) << kc::dims_to_string(sp);
    EXPECT_NE(first, last) << "the data must hold ties for this test to mean anything";
  }
}

// ---------------------------------------------------------------- NaN and -inf

TEST(MaxPoolNaN, NaNFirstMiddleLastInWindowIsSelected) {
  const PoolGeometry g = geometry({{3}, {3}, {}, {}});
  expect_forward(g, tensor({1, 1, 3}, {kNaN, 5, 9}), {kNaN}, {0});
  expect_forward(g, tensor({1, 1, 3}, {1, kNaN, 9}), {kNaN}, {1});
  expect_forward(g, tensor({1, 1, 3}, {1, 5, kNaN}), {kNaN}, {2});
  expect_forward(g, tensor({1, 1, 3}, {kInf, -kInf, kNaN}), {kNaN}, {2});
}

TEST(MaxPoolNaN, SeveralNaNsFollowTheTieRule) {
  Spec s{{4}, {4}, {}, {}};
  const Tensor x = tensor({1, 1, 4}, {1, kNaN, 3, kNaN});
  s.tie = TieRule::kFirst;
  expect_forward(geometry(s), x, {kNaN}, {1});
  s.tie = TieRule::kAny;
  expect_forward(geometry(s), x, {kNaN}, {1});
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), x, {kNaN}, {3});
}

TEST(MaxPoolNaN, NaNOnlyAffectsItsOwnWindows) {
  const PoolGeometry g = geometry({{6}, {2}, {}, {}});
  expect_forward(g, tensor({1, 1, 6}, {1, 2, kNaN, 0, 4, 3}), {2, kNaN, 4}, {1, 2, 4});
}

TEST(MaxPoolPadding, AllMinusInfWindowFollowsTheTieRuleAmongItsInputElements) {
  // in 3, kernel 3, stride 1, pad [1, 1]: windows [-1, 1], [0, 2], [1, 3].
  Spec s{{3}, {3}, {1}, {{1, 1}}};
  const Tensor x = tensor({1, 1, 3}, {-kInf, -kInf, -kInf});
  for (TieRule tie : {TieRule::kFirst, TieRule::kAny}) {
    s.tie = tie;
    expect_forward(geometry(s), x, {-kInf, -kInf, -kInf}, {0, 0, 1});
  }
  // -inf ties move under `last` like any other tie; padding is still never chosen.
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), x, {-kInf, -kInf, -kInf}, {1, 2, 2});
  expect_forward(geometry(s), tensor({1, 1, 3}, {-kInf, -2, -2}), {-2, -2, -2}, {1, 2, 2});
}

TEST(MaxPoolTies, AllMinusInfWindowUnderTieLastPointsToItsLastElement) {
  // x = [-inf, -inf, 1, 2], k2 s2: the first window holds only -inf.
  Spec s{{4}, {2}, {2}, {}};
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), tensor({1, 1, 4}, {-kInf, -kInf, 1, 2}), {-kInf, 2}, {1, 3});
  s.tie = TieRule::kFirst;
  expect_forward(geometry(s), tensor({1, 1, 4}, {-kInf, -kInf, 1, 2}), {-kInf, 2}, {0, 3});
}

TEST(MaxPoolPadding, AllMinusInf2DWindowIndexInsideThePlane) {
  Spec s{{2, 2}, {3, 3}, {1, 1}, {{1, 1}, {1, 1}}};
  const Tensor x = tensor({1, 1, 2, 2}, {-kInf, -kInf, -kInf, -kInf});
  // Every window covers input rows/cols [0, 1]: first element (0, 0), last (1, 1).
  expect_forward(geometry(s), x, {-kInf, -kInf, -kInf, -kInf}, {0, 0, 0, 0});
  s.tie = TieRule::kLast;
  expect_forward(geometry(s), x, {-kInf, -kInf, -kInf, -kInf}, {3, 3, 3, 3});
}

TEST(MaxPoolPadding, NeverSelectedWhenEveryInputIsNegative) {
  // Were padding 0 instead of -inf, every output would be 0 and point at padding.
  const PoolGeometry g1 = geometry({{3}, {3}, {1}, {{1, 1}}});
  expect_forward(g1, tensor({1, 1, 3}, {-5, -3, -4}), {-3, -3, -3}, {1, 1, 1});
  const PoolGeometry g2 = geometry({{2, 2}, {2, 2}, {2, 2}, {{1, 1}, {1, 1}}});
  expect_forward(g2, tensor({1, 1, 2, 2}, {-1, -2, -3, -4}), {-1, -2, -3, -4}, {0, 1, 2, 3});
}

// ---------------------------------------------------------------- ceil_mode

TEST(MaxPoolCeilMode, WindowStartingInRightPaddingIsDropped) {
  // in 3, kernel 2, stride 2, pad [1, 1]: ceil gives 3 windows, but the third would start
  // at padded position 4 >= in + lo = 4, i.e. only padding: dropped, out = 2.
  Spec s{{3}, {2}, {2}, {{1, 1}}};
  s.ceil_mode = true;
  const PoolGeometry g = geometry(s);
  EXPECT_EQ(g.y_shape(), (Dims{1, 1, 2}));
  expect_forward(g, tensor({1, 1, 3}, {4, 6, 5}), {4, 6}, {0, 1});
  s.ceil_mode = false;
  EXPECT_EQ(geometry(s).y_shape(), (Dims{1, 1, 2}));
}

TEST(MaxPoolCeilMode, WindowStartingInsideInputIsKept) {
  // in 6, kernel 3, stride 2, no padding: floor gives 2 windows, ceil 3; the third starts
  // at 4 < 6 and covers input 4, 5 and one position past the input.
  Spec s{{6}, {3}, {2}, {}};
  const Tensor x = tensor({1, 1, 6}, {1, 2, 3, 4, 8, 7});
  EXPECT_EQ(geometry(s).y_shape(), (Dims{1, 1, 2}));
  s.ceil_mode = true;
  const PoolGeometry g = geometry(s);
  EXPECT_EQ(g.y_shape(), (Dims{1, 1, 3}));
  expect_forward(g, x, {3, 8, 8}, {2, 4, 4});
  s.tie = TieRule::kLast;
  const Tensor flat = tensor({1, 1, 6}, {0, 0, 0, 0, 0, 0});
  expect_forward(geometry(s), flat, {0, 0, 0}, {2, 4, 5});
}

// ---------------------------------------------------------------- modes

TEST(MaxPoolMode, InferenceKeepsNoIndicesAndTheSameY) {
  Spec s{{5, 5}, {3, 3}, {2, 2}, {{1, 1}, {1, 1}}};
  std::mt19937_64 rng(3);
  const Tensor x = kc::test::integer_tensor({1, 1, 5, 5}, rng, -3, 3);
  const auto train = kc::ref::maxpool_forward(geometry(s), x);
  s.mode = kc::PoolMode::kInference;
  const auto infer = kc::ref::maxpool_forward(geometry(s), x);
  EXPECT_TRUE(train.indices.has_value());
  EXPECT_FALSE(infer.indices.has_value());
  EXPECT_TRUE(kc::bitwise_equal(train.y, infer.y));
}

// ---------------------------------------------------------------- backward

TEST(MaxPoolBackward, RoutesDyToTheArgmax) {
  const PoolGeometry g = geometry({{4, 4}, {2, 2}, {2, 2}, {}});
  const Tensor x = tensor({1, 1, 4, 4}, {1, 2, 5, 3, 4, 0, 1, 6, 7, 8, 2, 2, 3, 9, 4, 1});
  const auto fwd = kc::ref::maxpool_forward(g, x);
  const auto dx = kc::ref::maxpool_backward(g, tensor({1, 1, 2, 2}, {1, 2, 3, 4}), fwd.indices);
  ASSERT_TRUE(dx.ok()) << dx.status().to_string();
  std::vector<double> want(16, 0.0);
  want[4] = 1, want[7] = 2, want[13] = 3, want[14] = 4;
  EXPECT_EQ(dx->data, want);
  EXPECT_EQ(dx->dtype, kc::DType::kF64);
  EXPECT_EQ(dx->shape, g.x_shape());
}

TEST(MaxPoolBackward, OverlappingWindowsAdd) {
  // Input 5 (value 9) is the max of windows 2 and 3: it receives dy2 + dy3.
  const PoolGeometry g = geometry({{8}, {3}, {2}, {{1, 1}}});
  const Tensor x = tensor({1, 1, 8}, {3, 1, 4, 1, 5, 9, 2, 6});
  const auto fwd = kc::ref::maxpool_forward(g, x);
  const Tensor dy = tensor({1, 1, 4}, {1, 10, 100, 1000});
  const auto dx = kc::ref::maxpool_backward(g, dy, fwd.indices);
  ASSERT_TRUE(dx.ok()) << dx.status().to_string();
  EXPECT_EQ(dx->data, (std::vector<double>{1, 0, 10, 0, 0, 1100, 0, 0}));
  ASSERT_TRUE(fwd.indices.has_value());
  EXPECT_EQ(kc::ref::direct::maxpool_backward(g, dy, *fwd.indices).data, dx->data);
}

TEST(MaxPoolBackward, RefusedWithoutIndices) {
  Spec s{{4, 4}, {2, 2}, {2, 2}, {}};
  s.mode = kc::PoolMode::kInference;
  const PoolGeometry g = geometry(s);
  const auto fwd = kc::ref::maxpool_forward(g, Tensor::filled(kc::DType::kF64, g.x_shape(), 1.0));
  ASSERT_FALSE(fwd.indices.has_value());
  const auto dx = kc::ref::maxpool_backward(g, Tensor::filled(kc::DType::kF64, g.y_shape(), 1.0), fwd.indices);
  ASSERT_FALSE(dx.ok()) << "backward without indices must be refused, not return zeros";
  EXPECT_EQ(dx.status().code(), kc::StatusCode::kFailedPrecondition);
  EXPECT_NE(dx.status().message().find("indices"), std::string::npos) << dx.status().message();
  EXPECT_NE(dx.status().message().find("training"), std::string::npos) << dx.status().message();
}

TEST(MaxPoolBackward, IndexOutsideThePlaneIsOutOfRange) {
  const PoolGeometry g = geometry({{4}, {2}, {}, {}});
  const Tensor dy = Tensor::filled(kc::DType::kF64, g.y_shape(), 1.0);
  for (int64_t bad : {int64_t{-1}, int64_t{4}}) {
    const kc::IndexTensor idx{g.y_shape(), {0, bad}};
    const auto dx = kc::ref::maxpool_backward(g, dy, idx);
    ASSERT_FALSE(dx.ok()) << bad;
    EXPECT_EQ(dx.status().code(), kc::StatusCode::kOutOfRange) << dx.status().to_string();
  }
}

// Central differences of loss(x) = <maxpool(x), dy> on distinct inputs (the max is
// locally linear there) against the analytic backward.
void expect_gradient_matches_finite_differences(const Spec& s, uint64_t seed) {
  const PoolGeometry g = geometry(s);
  std::mt19937_64 rng(seed);
  const Tensor x = kc::test::distinct_tensor(g.x_shape(), rng);
  const Tensor dy = kc::test::random_tensor(kc::DType::kF64, g.y_shape(), rng, -1.0, 1.0);
  const auto loss = [&](const Tensor& xx) { return kc::test::dot(kc::ref::maxpool_forward(g, xx).y, dy); };
  // distinct_tensor spaces values 2/numel apart; h stays well under half of that.
  const Tensor numeric = kc::test::numeric_gradient(loss, x, 1e-6);
  const auto analytic = kc::ref::maxpool_backward(g, dy, kc::ref::maxpool_forward(g, x).indices);
  ASSERT_TRUE(analytic.ok()) << analytic.status().to_string();
  EXPECT_LT(kc::test::max_abs_diff(numeric, *analytic), 1e-6) << kc::dims_to_string(s.spatial);
  EXPECT_GT(kc::test::max_abs(*analytic), 0.0) << "a zero gradient would pass trivially";
}

TEST(MaxPoolBackward, MatchesFiniteDifferences1D) {
  expect_gradient_matches_finite_differences({{11}, {3}, {2}, {{1, 1}}}, 11);
  expect_gradient_matches_finite_differences({{9}, {3}, {1}, {{1, 0}}, {2}}, 12);
}

TEST(MaxPoolBackward, MatchesFiniteDifferences2D) {
  expect_gradient_matches_finite_differences({{6, 7}, {3, 3}, {2, 1}, {{1, 1}, {0, 1}}}, 21);
  Spec s{{5, 6}, {2, 3}, {1, 2}, {{1, 0}, {1, 1}}};
  s.ceil_mode = true;
  s.channels = 2;
  expect_gradient_matches_finite_differences(s, 22);
}

TEST(MaxPoolBackward, MatchesFiniteDifferences3D) {
  expect_gradient_matches_finite_differences({{4, 5, 4}, {2, 3, 3}, {1, 2, 1}, {{1, 0}, {1, 1}, {0, 1}}}, 31);
}

}  // namespace
