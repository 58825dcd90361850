// The data generators produce what kernels get wrong, in every dtype: NaN, both
// infinities, both zeros, subnormals of the dtype, ties and near-ties; every value is
// representable in its dtype; whole tensors of one kind occur (a window of only
// -inf); and a value shrinks to an ordinary 0.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <set>

#include "gen_support.h"
#include "kc/dtype.h"

namespace kc {
namespace {

double min_normal(DType t) {
  switch (t) {
    case DType::kF64:
      return 0x1p-1022;
    case DType::kF32:
      return 0x1p-126;
    case DType::kF16:
      return 0x1p-14;
    case DType::kBF16:
      return 0x1p-126;
  }
  return 0;
}

std::string kind_of(DType t, double v) {
  static const double ties[] = {1.0, -1.0, 0.5, 0.0, 0.25};
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0" : "+0";
  if (std::abs(v) < min_normal(t)) return "subnormal";
  for (double tie : ties) {
    if (v == tie) return "tie";
    if (std::abs(v - tie) <= 8 * unit_roundoff(t) * std::max(1.0, std::abs(tie))) return "near-tie";
  }
  return "ordinary";
}

TEST(GenData, EveryKindInEveryDtype) {
  for (DType t : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    std::set<std::string> seen;
    const auto g = gen::data_value(t, gen::kAllData);
    for (uint64_t k = 0; k < 3000; ++k) {
      const double v = gen::generate(g, 11, k).value();
      ASSERT_TRUE(std::isnan(v) || round_to(t, v) == v) << v << " is not a " << dtype_name(t);
      seen.insert(kind_of(t, v));
    }
    for (const char* want : {"nan", "+inf", "-inf", "+0", "-0", "subnormal", "tie", "near-tie", "ordinary"}) {
      EXPECT_TRUE(seen.count(want)) << dtype_name(t) << ": no " << want;
    }
  }
}

TEST(GenData, KindsOutsideTheMaskNeverAppear) {
  const auto g = gen::data_value(DType::kF32, gen::kFiniteData & ~gen::kSubnormal);
  for (uint64_t k = 0; k < 3000; ++k) {
    const double v = gen::generate(g, 12, k).value();
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_NE(kind_of(DType::kF32, v), "subnormal");
  }
}

TEST(GenData, WholeTensorsOfOneKindOccur) {
  // A palette of one kind makes, e.g., every element infinite: pool windows of only -inf.
  const auto g = gen::data_tensor(DType::kF16, {2, 3}, gen::kOrdinary | gen::kInfinity | gen::kNaN);
  int all_infinite = 0, all_nan = 0, mixed = 0;
  for (uint64_t k = 0; k < 400; ++k) {
    const Tensor t = gen::generate(g, 13, k).value();
    ASSERT_EQ(t.shape, (Dims{2, 3}));
    ASSERT_EQ(t.dtype, DType::kF16);
    int inf = 0, nan = 0;
    for (double v : t.data) inf += std::isinf(v), nan += std::isnan(v);
    all_infinite += inf == 6;
    all_nan += nan == 6;
    mixed += inf > 0 && inf < 6;
  }
  EXPECT_GT(all_infinite, 0);
  EXPECT_GT(all_nan, 0);
  EXPECT_GT(mixed, 0);
}

TEST(GenData, ValuesShrinkToAnOrdinaryZero) {
  const auto g = gen::data_value(DType::kBF16, gen::kAllData);
  for (uint64_t k = 0; k < 50; ++k) {
    rc::Shrinkable<double> s = gen::generate(g, 14, k);
    for (int steps = 0; steps < 1000; ++steps) {  // always take the first shrink
      rc::Maybe<rc::Shrinkable<double>> next = s.shrinks().next();
      if (!next) break;
      s = *next;
    }
    EXPECT_EQ(s.value(), 0.0);
    EXPECT_FALSE(std::signbit(s.value()));
  }
}

RC_GTEST_PROP(GenData, InlineXHasTheInputShape, ()) {
  const Case c = *gen::valid_case(gen::kAllOps);
  const Case with = *gen::with_inline_x(c, gen::kAllData);
  const Tensor& x = with.tensors.at("x");
  Dims want = {c.input.batch, c.input.channels};
  want.insert(want.end(), c.input.spatial.begin(), c.input.spatial.end());
  RC_ASSERT(x.shape == want);
  RC_ASSERT(x.dtype == c.dtype);
}

}  // namespace
}  // namespace kc
