// Tests of kc/dtype.h: rounding to each storage dtype (round to nearest, ties to even,
// overflow, subnormals), unit roundoffs, names and exact integer limits.
// Every expected value is worked by hand from the IEEE formats: significand precision
// p = 53 (f64), 24 (f32), 11 (f16), 8 (bf16); f16 has emin = -14 (smallest subnormal
// 2^-24, largest finite 65504); bf16 shares f32's exponent range.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "kc/dtype.h"

namespace kc {
namespace {

double p2(int e) { return std::ldexp(1.0, e); }
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kAll[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16};

struct RoundRow {
  DType dtype;
  double in;
  double want;
  const char* why;
};

// Hand-worked rounding table. ulp(1) = 2^(1-p); the midpoint between 1 and 1 + ulp is
// 1 + 2^-p, which ties to the even neighbour 1.
const RoundRow kRoundTable[] = {
    // f16: ulp(1) = 2^-10.
    {DType::kF16, 1.0 + p2(-11), 1.0, "midpoint 1 | 1+2^-10 ties to even (1)"},
    {DType::kF16, 1.0 + 3 * p2(-11), 1.0 + p2(-9), "midpoint 1+2^-10 | 1+2^-9 ties to even (1+2^-9)"},
    {DType::kF16, 1.0 + p2(-11) + p2(-20), 1.0 + p2(-10), "just above the midpoint rounds up"},
    {DType::kF16, -(1.0 + 3 * p2(-11)), -(1.0 + p2(-9)), "sign is symmetric"},
    {DType::kF16, 65504.0, 65504.0, "largest finite f16 is exact"},
    {DType::kF16, 65519.0, 65504.0, "below the 65504 | 65536 midpoint stays finite"},
    {DType::kF16, 65520.0, kInf, "midpoint 65504 | 2^16 ties to even 2^16: overflow"},
    {DType::kF16, -65520.0, -kInf, "negative overflow"},
    {DType::kF16, 2049.0, 2048.0, "ulp(2048) = 2: 2049 ties to even 2048"},
    {DType::kF16, 2051.0, 2052.0, "2051 ties to even 2052"},
    {DType::kF16, p2(-14), p2(-14), "smallest normal"},
    {DType::kF16, p2(-24), p2(-24), "smallest subnormal"},
    {DType::kF16, 3 * p2(-24), 3 * p2(-24), "subnormal 3*2^-24 is exact"},
    {DType::kF16, p2(-25), 0.0, "half the smallest subnormal ties to even 0"},
    {DType::kF16, 0.75 * p2(-24), p2(-24), "above the 0 | 2^-24 midpoint"},
    {DType::kF16, 1.5 * p2(-24), p2(-23), "midpoint 2^-24 | 2^-23 ties to even 2^-23"},
    {DType::kF16, 0.1, 1638.0 * p2(-14), "0.1 = 1638.4 * 2^-14 -> 1638 * 2^-14"},
    // bf16: ulp(1) = 2^-7.
    {DType::kBF16, 1.00390625, 1.0, "1 + 2^-8 is the midpoint, ties to even 1"},
    {DType::kBF16, 1.0 + 3 * p2(-8), 1.0 + p2(-6), "midpoint 1+2^-7 | 1+2^-6 ties to even"},
    {DType::kBF16, 1.0 + p2(-8) + p2(-20), 1.0 + p2(-7), "above the midpoint rounds up"},
    {DType::kBF16, 257.0, 256.0, "ulp(256) = 2: 257 ties to even 256"},
    {DType::kBF16, 259.0, 260.0, "259 ties to even 260"},
    {DType::kBF16, 65520.0, 65536.0, "bf16 has f32's range: no overflow at 65520"},
    {DType::kBF16, (2.0 - p2(-7)) * p2(127), (2.0 - p2(-7)) * p2(127), "largest finite bf16"},
    {DType::kBF16, (2.0 - p2(-23)) * p2(127), kInf, "FLT_MAX is past the bf16 overflow midpoint"},
    {DType::kBF16, p2(-133), p2(-133), "bf16 smallest subnormal is 2^-133"},
    // Rounded once from f64, not twice through f32 (where the f32 value is a tie).
    {DType::kF16, 1.0 + p2(-11) + p2(-40), 1.0 + p2(-10), "just above the midpoint rounds up (not via f32's tie)"},
    {DType::kF16, 1.0 + p2(-11) - p2(-40), 1.0, "just below the midpoint rounds down"},
    {DType::kF16, 65520.0 - p2(-30), 65504.0, "just below f16's overflow midpoint stays finite"},
    {DType::kBF16, 1.0 + p2(-8) + p2(-40), 1.0 + p2(-7), "bf16: just above the midpoint rounds up"},
    {DType::kBF16, -(1.0 + p2(-8) + p2(-40)), -(1.0 + p2(-7)), "and so does its negative, away from 0"},
    {DType::kBF16, 1e39, kInf, "a double past f32's range overflows bf16 too"},
    {DType::kF16, 1e-50, 0.0, "far below f16's subnormals: 0"},
    // f32: ulp(1) = 2^-23.
    {DType::kF32, 1.0 + p2(-24), 1.0, "midpoint ties to even 1"},
    {DType::kF32, 1.0 + 3 * p2(-24), 1.0 + p2(-22), "midpoint ties to even 1+2^-22"},
    {DType::kF32, 16777217.0, 16777216.0, "2^24 + 1 ties to even 2^24"},
    {DType::kF32, p2(-149), p2(-149), "smallest f32 subnormal"},
    {DType::kF32, p2(-150), 0.0, "half the smallest subnormal ties to even 0"},
    {DType::kF32, 3.5e38, kInf, "beyond FLT_MAX overflows"},
    // f64: the identity.
    {DType::kF64, 0.1, 0.1, "f64 keeps every double"},
    {DType::kF64, 1.0 + p2(-52), 1.0 + p2(-52), "f64 keeps the last significand bit"},
};

TEST(DTypeRoundTo, HandWorkedTable) {
  for (const RoundRow& r : kRoundTable) {
    EXPECT_EQ(round_to(r.dtype, r.in), r.want) << dtype_name(r.dtype) << " of " << r.in << ": " << r.why;
  }
}

TEST(DTypeRoundTo, SpecialValuesPassThrough) {
  for (DType d : kAll) {
    EXPECT_TRUE(std::isnan(round_to(d, std::nan("")))) << dtype_name(d);
    EXPECT_EQ(round_to(d, kInf), kInf) << dtype_name(d);
    EXPECT_EQ(round_to(d, -kInf), -kInf) << dtype_name(d);
    const double neg_zero = round_to(d, -0.0);
    EXPECT_EQ(neg_zero, 0.0) << dtype_name(d);
    EXPECT_TRUE(std::signbit(neg_zero)) << dtype_name(d) << " lost the sign of -0";
  }
}

TEST(DTypeRoundTo, ResultIsRepresentableAndNearest) {
  // round_to is idempotent, and the result is no farther from v than half an ulp
  // (relative error <= u for normal values).
  const double samples[] = {0.1, -0.3, 1.0 / 3.0, 3.14159, 1234.5678, -7.0e-3};
  for (DType d : kAll) {
    for (double v : samples) {
      const double r = round_to(d, v);
      EXPECT_EQ(round_to(d, r), r) << dtype_name(d) << " " << v;
      EXPECT_LE(std::fabs(r - v), unit_roundoff(d) * std::fabs(v)) << dtype_name(d) << " " << v;
    }
  }
}

TEST(DTypeRoundTo, NarrowerTypesLoseMore) {
  // 1/3 needs an infinite significand: each narrower dtype is strictly less accurate.
  const double v = 1.0 / 3.0;
  const double e64 = std::fabs(round_to(DType::kF64, v) - v);
  const double e32 = std::fabs(round_to(DType::kF32, v) - v);
  const double e16 = std::fabs(round_to(DType::kF16, v) - v);
  const double eb16 = std::fabs(round_to(DType::kBF16, v) - v);
  EXPECT_EQ(e64, 0.0);
  EXPECT_LT(e64, e32);
  EXPECT_LT(e32, e16);
  EXPECT_LT(e16, eb16);
}

TEST(DTypeUnitRoundoff, IsTwoToMinusPrecision) {
  EXPECT_EQ(unit_roundoff(DType::kF64), p2(-53));
  EXPECT_EQ(unit_roundoff(DType::kF32), p2(-24));
  EXPECT_EQ(unit_roundoff(DType::kF16), p2(-11));
  EXPECT_EQ(unit_roundoff(DType::kBF16), p2(-8));
  EXPECT_EQ(unit_roundoff(DType::kF32), static_cast<double>(std::numeric_limits<float>::epsilon()) / 2);
}

TEST(DTypeUnitRoundoff, AgreesWithRounding) {
  // u is half the spacing at 1: 1 + u is a tie (to 1), 1 + 2u is representable, and
  // anything just above 1 + u rounds up.
  for (DType d : kAll) {
    if (d == DType::kF64) continue;  // 1 + 2^-53 is not a double to begin with
    const double u = unit_roundoff(d);
    EXPECT_EQ(round_to(d, 1.0 + u), 1.0) << dtype_name(d);
    EXPECT_EQ(round_to(d, 1.0 + 2 * u), 1.0 + 2 * u) << dtype_name(d);
    EXPECT_EQ(round_to(d, 1.0 + u + u / 8), 1.0 + 2 * u) << dtype_name(d);
  }
}

TEST(DTypeNames, RoundTripAndSpelling) {
  EXPECT_EQ(dtype_name(DType::kF64), "f64");
  EXPECT_EQ(dtype_name(DType::kF32), "f32");
  EXPECT_EQ(dtype_name(DType::kF16), "f16");
  EXPECT_EQ(dtype_name(DType::kBF16), "bf16");
  for (DType d : kAll) {
    auto parsed = parse_dtype(dtype_name(d));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(d);
    EXPECT_EQ(*parsed, d);
  }
}

TEST(DTypeNames, RejectsOtherSpellings) {
  for (const char* bad : {"", "F32", "fp32", "float", "half", "bfloat16", "f8", "f32 ", "bf"}) {
    EXPECT_FALSE(parse_dtype(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(DTypeStorage, BytesAndAccumulation) {
  EXPECT_EQ(storage_bytes(DType::kF64), 8);
  EXPECT_EQ(storage_bytes(DType::kF32), 4);
  EXPECT_EQ(storage_bytes(DType::kF16), 2);
  EXPECT_EQ(storage_bytes(DType::kBF16), 2);
  // docs/ops.md, "Dtypes and accumulation": accumulation is f32 for f16/bf16.
  EXPECT_EQ(default_accumulation(DType::kF16), DType::kF32);
  EXPECT_EQ(default_accumulation(DType::kBF16), DType::kF32);
  EXPECT_EQ(default_accumulation(DType::kF32), DType::kF32);
  EXPECT_EQ(default_accumulation(DType::kF64), DType::kF64);
  // An accumulator has the storage's precision and range at least.
  for (DType s : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    EXPECT_TRUE(accumulates(s, s));
    EXPECT_TRUE(accumulates(DType::kF64, s));
    EXPECT_TRUE(accumulates(default_accumulation(s), s));
  }
  EXPECT_FALSE(accumulates(DType::kF16, DType::kBF16));  // range
  EXPECT_FALSE(accumulates(DType::kBF16, DType::kF16));  // precision
  EXPECT_FALSE(accumulates(DType::kF16, DType::kF32));
  EXPECT_FALSE(accumulates(DType::kF32, DType::kF64));
}

TEST(DTypeExactIntegers, LimitIsTwoToThePrecision) {
  EXPECT_EQ(exact_integer_limit(DType::kF64), int64_t{1} << 53);
  EXPECT_EQ(exact_integer_limit(DType::kF32), int64_t{1} << 24);
  EXPECT_EQ(exact_integer_limit(DType::kF16), 2048);
  EXPECT_EQ(exact_integer_limit(DType::kBF16), 256);
}

TEST(DTypeExactIntegers, LimitIsTightUnderRounding) {
  // Every integer in [-n, n] survives rounding; n + 1 does not (it ties to even n).
  for (DType d : kAll) {
    const int64_t n = exact_integer_limit(d);
    const double nd = static_cast<double>(n);
    EXPECT_EQ(round_to(d, nd), nd) << dtype_name(d);
    EXPECT_EQ(round_to(d, -nd), -nd) << dtype_name(d);
    if (d != DType::kF64) {  // 2^53 + 1 is not a double
      EXPECT_NE(round_to(d, nd + 1), nd + 1) << dtype_name(d);
    }
    // Exhaustive for the 16-bit types, a window at the top for the wide ones.
    const int64_t from = n <= 4096 ? 0 : n - 4096;
    for (int64_t i = from; i <= n; ++i) {
      const double v = static_cast<double>(i);
      if (round_to(d, v) != v || round_to(d, -v) != -v) {
        ADD_FAILURE() << dtype_name(d) << ": integer " << i << " is not exact";
        break;
      }
    }
  }
}

}  // namespace
}  // namespace kc
