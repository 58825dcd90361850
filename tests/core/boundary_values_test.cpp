// The boundary values of each dtype (core/boundary_values.h) are what their names say:
// exact in the dtype, and the round-to-max offsets put a sum with max on each side of the
// threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/boundary_values.h"

namespace kc {
namespace {

std::map<std::string, double> values_of(DType d) {
  std::map<std::string, double> m;
  for (const BoundaryValue& v : finite_boundary_values(d)) m[v.name] = v.value;
  return m;
}

TEST(BoundaryValues, EveryValueIsExactInItsDtype) {
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    for (const BoundaryValue& v : finite_boundary_values(d)) {
      EXPECT_EQ(round_to(d, v.value), v.value) << dtype_name(d) << " " << v.name;
    }
  }
}

TEST(BoundaryValues, TheRoundToMaxOffsetsSitOnEachSideOfTheThreshold) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {  // sums exact in f64
    const auto m = values_of(d);
    const double max = m.at("largest finite");
    EXPECT_EQ(max, largest_finite(d));
    EXPECT_EQ(round_to(d, max + m.at("just below half an ulp of the largest finite (a sum with it rounds to max)")),
              max)
        << dtype_name(d);
    EXPECT_TRUE(std::isinf(round_to(d, max + m.at("half an ulp of the largest finite (a sum with it becomes inf)"))))
        << dtype_name(d);
  }
  EXPECT_EQ(values_of(DType::kF16).at("half an ulp of the largest finite (a sum with it becomes inf)"), 16.0);
}

TEST(BoundaryValues, SubnormalsAndTiesAreWhatTheyClaim) {
  const auto f16 = values_of(DType::kF16);
  EXPECT_EQ(f16.at("smallest subnormal"), std::ldexp(1.0, -24));
  EXPECT_EQ(f16.at("largest subnormal"), std::ldexp(1.0, -14) - std::ldexp(1.0, -24));
  EXPECT_EQ(f16.at("smallest normal"), std::ldexp(1.0, -14));
  const double tie_maker = f16.at("2^p + 1 (times 1.5 or plus 0.5: a tie between neighbours)");
  EXPECT_EQ(tie_maker, 1025.0);
  EXPECT_EQ(round_to(DType::kF16, tie_maker * 1.5), 1538.0);  // 1537.5: a tie, to even
  EXPECT_EQ(values_of(DType::kBF16).at("smallest subnormal"), std::ldexp(1.0, -133));
}

TEST(BoundaryValues, TheDrawMixesBoundaryNonFiniteAndPlainValues) {
  int non_finite = 0, boundary = 0, plain = 0;
  const auto m = values_of(DType::kBF16);
  for (uint64_t i = 0; i < 20000; ++i) {
    const double v = boundary_element(7, 1, i, DType::kBF16);
    bool listed = false;
    for (const auto& [name, b] : m) listed = listed || (v == b && std::signbit(v) == std::signbit(b));
    non_finite += !std::isfinite(v);
    boundary += listed && std::isfinite(v);
    plain += !listed && std::isfinite(v);
    const double again = boundary_element(7, 1, i, DType::kBF16);  // a pure function of its arguments
    EXPECT_TRUE(again == v || (std::isnan(again) && std::isnan(v))) << i;
  }
  EXPECT_GT(non_finite, 150);
  EXPECT_LT(non_finite, 450);
  EXPECT_GT(boundary, 8000);
  EXPECT_GT(plain, 9000);
}

}  // namespace
}  // namespace kc
