// A backend that declares Winograd F(4,3) is judged by the transform's error bound
// (judge/transform_bound.h), normwise per output plane, and never held to exact: a
// "Winograd" whose error sits at a third of that bound passes forward (also on integer
// data under `tolerance: exact`, where the message says why), the same error from a
// backend that declares direct sums fails, and one at ten times the bound fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "judge/transform_bound.h"
#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

// The reference's y (f32 cases), then every element moved by `k` times the F(4,3) bound of its plane
// (signs alternating), as a transform's rounding spread over the tile would move it.
class PlantedTransformError final : public test::DelegatingBackend {
 public:
  PlantedTransformError(double k, bool declares) : DelegatingBackend("winograd_like"), k_(k), declares_(declares) {}
  Numerics numerics() const override {
    Numerics n;
    if (declares_) n.algorithm = Algorithm::kWinograd, n.transform_m = 4, n.transform_r = 3;
    return n;
  }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    Tensor abs_b = b ? absolute(*b) : Tensor{};
    Tensor abs = ref::conv_forward(g, absolute(x), absolute(w), b ? &abs_b : nullptr);
    spread_over_planes(abs);
    Numerics wino;
    wino.algorithm = Algorithm::kWinograd, wino.transform_m = 4, wino.transform_r = 3;
    const int rank = static_cast<int>(g.spatial.dims.size());
    ToleranceSpec spec{Tolerance{}, DType::kF32, g.in_per_group() * g.spatial.kernel_count() + 1};
    spec.transform_growth = transform_growth(wino, rank);
    spec.transform_terms = transform_terms(wino, rank);
    for (int64_t i = 0; i < y.size(); ++i) {
      const double moved = y[i] + (i % 2 ? -k_ : k_) * element_bound(spec, 0.0, abs[i]);
      y[i] = round_to(DType::kF32, moved);
    }
    return ok_status();
  }

 private:
  double k_;
  bool declares_;
};

Case f32_conv(Fill fill, ToleranceKind tol) {
  Case c = conv_case({.batch = 1, .channels = 4, .out_channels = 2, .spatial = {8, 8}, .kernel = {3, 3}});
  c.dtype = DType::kF32;
  c.data.fill = fill;
  c.tolerance.kind = tol;
  return c;
}

TEST(TransformBound, AWinogradWithinItsBoundPassesAndIsNotHeldToExact) {
  PlantedTransformError within(1.0 / 3.0, true);
  const CheckResult r = run_check(f32_conv(Fill::kRandom, ToleranceKind::kBound), within, "forward");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  const CheckResult exact = run_check(f32_conv(Fill::kInteger, ToleranceKind::kExact), within, "forward");
  EXPECT_EQ(exact.disposition, Disposition::kPassed) << describe(exact);
  EXPECT_THAT(exact.message, HasSubstr("judged by winograd F(4,3)'s error bound, not exactly"));
}

TEST(TransformBound, TheSameErrorFailsABackendThatDeclaresDirectSums) {
  PlantedTransformError undeclared(1.0 / 3.0, false);
  EXPECT_EQ(run_check(f32_conv(Fill::kRandom, ToleranceKind::kBound), undeclared, "forward").disposition,
            Disposition::kFailed);
}

TEST(TransformBound, TenTimesTheBoundFails) {
  PlantedTransformError outside(10.0, true);
  const CheckResult r = run_check(f32_conv(Fill::kRandom, ToleranceKind::kBound), outside, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_GT(r.max_error_ratio, 4.0) << describe(r);
}

// The identities between passes are not held exact for a transform either: its y rounds
// on integer data, and the adjoint is judged by the bound or, where that bound swamps the
// inner products, left unjudged with the reason (never MISTRUSTED for the data's sake).
TEST(TransformBound, IdentitiesOnIntegerDataAreJudgedByTheBound) {
  PlantedTransformError within(1.0 / 3.0, true);
  const Case c = f32_conv(Fill::kInteger, ToleranceKind::kExact);
  const CheckResult adj = run_check(c, within, "adjoint");
  EXPECT_TRUE(adj.disposition == Disposition::kPassed || adj.disposition == Disposition::kSkipped) << describe(adj);
  if (adj.disposition == Disposition::kSkipped) {
    EXPECT_THAT(adj.message, HasSubstr("winograd F(4,3)'s error bound"));
  }
  const CheckResult ws = run_check(c, within, "weight_share");
  EXPECT_EQ(ws.disposition, Disposition::kPassed) << describe(ws);
  PlantedTransformError undeclared(1.0 / 3.0, false);
  EXPECT_EQ(run_check(c, undeclared, "adjoint").disposition, Disposition::kFailed);
}

// The largest row of sqrt(|A^T|^2 (|G|^2 1 (.) |B^T|^2 1)), from Lavin and Gray's matrices.
template <size_t M, size_t A, size_t R>
double l2_growth(const double (&at)[M][A], const double (&g)[A][R], const double (&bt)[A][A]) {
  double most = 0.0;
  for (size_t i = 0; i < M; ++i) {
    double row = 0.0;
    for (size_t j = 0; j < A; ++j) {
      double gj = 0.0, bj = 0.0;
      for (size_t k = 0; k < R; ++k) gj += g[j][k] * g[j][k];
      for (size_t k = 0; k < A; ++k) bj += bt[j][k] * bt[j][k];
      row += at[i][j] * at[i][j] * gj * bj;
    }
    most = std::max(most, std::sqrt(row));
  }
  return most;
}

TEST(TransformBound, GrowthIsTheTransformMatrices2NormAndNoneForUnknownOnes) {
  const double at2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  const double g2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
  const double bt2[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  const double at4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  const double g4[6][3] = {{1. / 4, 0, 0},
                           {-1. / 6, -1. / 6, -1. / 6},
                           {-1. / 6, 1. / 6, -1. / 6},
                           {1. / 24, 1. / 12, 1. / 6},
                           {1. / 24, -1. / 12, 1. / 6},
                           {0, 0, 1}};
  const double bt4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                            {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  Numerics n;
  EXPECT_EQ(transform_growth(n, 2), 0.0);
  n.algorithm = Algorithm::kWinograd, n.transform_m = 2, n.transform_r = 3;
  EXPECT_DOUBLE_EQ(transform_growth(n, 2), std::pow(l2_growth(at2, g2, bt2), 2));
  n.transform_m = 4;
  EXPECT_DOUBLE_EQ(transform_growth(n, 1), l2_growth(at4, g4, bt4));
  EXPECT_DOUBLE_EQ(transform_growth(n, 2), std::pow(l2_growth(at4, g4, bt4), 2));
  EXPECT_EQ(transform_terms(n, 2), 2 * (3 + 2 * 6));
  n.algorithm = Algorithm::kFft;
  EXPECT_TRUE(std::isinf(transform_growth(n, 2)));
}

// An explicit rtol/atol written for direct sums gets the transform's rounding on top.
TEST(TransformBound, AnExplicitToleranceGainsTheTransformsRounding) {
  PlantedTransformError within(1.0 / 3.0, true);
  Case c = f32_conv(Fill::kRandom, ToleranceKind::kExplicit);
  c.tolerance.rtol = 1e-9, c.tolerance.atol = 1e-12;  // far below a transform's rounding
  const CheckResult r = run_check(c, within, "forward");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  PlantedTransformError outside(10.0, true);
  EXPECT_EQ(run_check(c, outside, "forward").disposition, Disposition::kFailed);
}

}  // namespace
}  // namespace kc
