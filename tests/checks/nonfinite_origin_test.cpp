// The forward check's diagnoses of wrong non-finite values: a fused relu that maps a NaN
// pre-activation to 0 is named "relu(NaN) = 0"; a NaN where the output's window and
// filter hold only finite values is named an out-of-window read, not padding; a Winograd
// tile that turns an infinity into NaN is named "±inf became NaN"; an f16 store that calls
// a sum past 65504 (but below the overflow threshold 65520) inf is named a conversion,
// never a read, and a sum at the threshold that rightly becomes inf is named nothing; a
// relu written as z * 0 is named "relu(-inf) = NaN"; an infinite bias is no read past the
// window; a NaN from a sum whose terms pass the accumulator's range is allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;
using ::testing::Not;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Plant { kNone, kReluNanZero, kNextPixelRead, kInfToNaN, kOverflowPastMax, kReluAsSlopeZero, kSumNaN };

// The reference's y with one planted change.
class PlantedForward final : public test::DelegatingBackend {
 public:
  explicit PlantedForward(Plant p) : DelegatingBackend("planted_forward"), p_(p) {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    // relu as z > 0 ? z : z * 0 (0 x -inf = NaN), on the pre-activation.
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu && p_ != Plant::kReluAsSlopeZero, y));
    if (p_ == Plant::kSumNaN) y[0] = kNaN;  // its partial sums overflowed to +inf and -inf
    for (int64_t i = 0; i < y.size(); ++i) {
      if (p_ == Plant::kReluAsSlopeZero && relu && !(y[i] > 0.0)) y[i] = y[i] * 0.0;
      if (p_ == Plant::kReluNanZero && std::isnan(y[i])) y[i] = 0.0;
      if (p_ == Plant::kInfToNaN && std::isinf(y[i])) y[i] = kNaN;
      if (p_ == Plant::kOverflowPastMax && std::abs(y[i]) >= 65504.0) y[i] = std::copysign(kInf, y[i]);
    }
    // A lane of the next pixel read into y[0] (1x1 conv: output 0 reads input 0 only).
    if (p_ == Plant::kNextPixelRead) y[0] = y[0] * x[1];
    return ok_status();
  }

 private:
  Plant p_;
};

// 1x1 conv over x = [1, inf, 1]: only output 1 meets the infinity.
Case one_by_one(std::initializer_list<double> x) {
  Case c = conv_case({.batch = 1, .channels = 1, .out_channels = 1, .spatial = {3}, .kernel = {1}});
  c.dtype = DType::kF32;
  c.tensors["x"] = Tensor{DType::kF32, {1, 1, 3}, HostVector<double>(x)};
  c.tensors["w"] = Tensor{DType::kF32, {1, 1, 1}, {2.0}};
  c.tensors["dy"] = Tensor{DType::kF32, {1, 1, 3}, {1.0, 1.0, 1.0}};
  return c;
}

TEST(NonfiniteOrigin, AReadPastTheWindowIsNamedNotPadding) {
  PlantedForward be(Plant::kNextPixelRead);
  const CheckResult r = run_check(one_by_one({1.0, kInf, 1.0}), be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("non-finite value from outside the output's window (an out-of-window read?)"));
  EXPECT_THAT(r.message, Not(HasSubstr("padding")));
}

TEST(NonfiniteOrigin, InfinityTurnedNaNIsNamed) {
  PlantedForward be(Plant::kInfToNaN);
  const CheckResult r = run_check(one_by_one({1.0, kInf, 1.0}), be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("±inf became NaN"));
  EXPECT_THAT(r.message, Not(HasSubstr("out-of-window")));
  // No subnormal in the window: no cause is claimed (neither DAZ nor inf - inf).
  EXPECT_THAT(r.message, Not(HasSubstr("DAZ")));
  EXPECT_THAT(r.message, Not(HasSubstr("inf - inf")));
}

// Subnormal inputs read as 0 (DAZ): 0 x inf is NaN where the oracle's tiny x times inf is inf.
class FlushesSubnormalInputs final : public test::DelegatingBackend {
 public:
  FlushesSubnormalInputs() : DelegatingBackend("flushes-subnormal-inputs") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    Tensor flushed = x;
    for (double& v : flushed.data) v = std::abs(v) < 0x1p-126 ? 0.0 : v;
    return reference().conv_forward(g, flushed, w, b, relu, y);
  }
};

TEST(NonfiniteOrigin, ASubnormalReadAsZeroTimesInfIsNamedDaz) {
  // 1x1 over two channels, w = [inf, 1]: y = [2^-140 inf + 1, -1 inf + 2] = [inf, -inf].
  Case c = conv_case({.batch = 1, .channels = 2, .out_channels = 1, .spatial = {2}, .kernel = {1}});
  c.dtype = DType::kF32;
  c.tensors["x"] = Tensor{DType::kF32, {1, 2, 2}, {0x1p-140, -1.0, 1.0, 2.0}};
  c.tensors["w"] = Tensor{DType::kF32, {1, 2, 1}, {kInf, 1.0}};
  c.tensors["dy"] = Tensor{DType::kF32, {1, 1, 2}, {1.0, 1.0}};
  FlushesSubnormalInputs be;
  const CheckResult r = run_check(c, be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("y: NaN at 1 outputs where the oracle gives ±inf and the window or filter holds a "
                                   "subnormal, the first y at (0, 0, 0): a subnormal read as 0 met an infinity"));
}

TEST(NonfiniteOrigin, ReluOfNaNGivingZeroIsNamed) {
  Case c = fused(one_by_one({1.0, kNaN, -1.0}));
  c.tensors["b"] = Tensor{DType::kF32, {1}, {0.5}};
  PlantedForward be(Plant::kReluNanZero);
  const CheckResult r = run_check(c, be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("relu(NaN) = 0 at 1 outputs whose pre-activation is NaN"));
  PlantedForward none(Plant::kNone);  // relu(NaN) = NaN, as the contract says
  EXPECT_EQ(run_check(c, none, "forward").disposition, Disposition::kPassed);
}

TEST(NonfiniteOrigin, ReluOfMinusInfGivingNaNIsNamed) {
  Case c = fused(one_by_one({1.0, -kInf, -1.0}));  // z = [2.5, -inf, -1.5]
  c.tensors["b"] = Tensor{DType::kF32, {1}, {0.5}};
  PlantedForward be(Plant::kReluAsSlopeZero);
  const CheckResult r = run_check(c, be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("relu(-inf) = NaN at 1 outputs whose pre-activation is -inf"));
  EXPECT_THAT(r.message, Not(HasSubstr("out-of-window")));
  // The near miss: a NaN pre-activation made 0 is the other diagnosis, not this one.
  Case nan_case = fused(one_by_one({1.0, kNaN, -1.0}));
  nan_case.tensors["b"] = Tensor{DType::kF32, {1}, {0.5}};
  PlantedForward zero(Plant::kReluNanZero);
  EXPECT_THAT(run_check(nan_case, zero, "forward").message, Not(HasSubstr("relu(-inf)")));
}

// A bias is part of every output's sum: its infinity reaching y is no read past the window.
TEST(NonfiniteOrigin, AnInfiniteBiasIsNoOutOfWindowRead) {
  Case c = one_by_one({1.0, 2.0, 1.0});
  c.tensors["b"] = Tensor{DType::kF32, {1}, {kInf}};
  std::get<ConvParams>(c.op).bias = true;
  PlantedForward be(Plant::kInfToNaN);
  const CheckResult r = run_check(c, be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, Not(HasSubstr("out-of-window")));
}

// 1x1 over three channels, w = 1: y[0] = x0 + x1 + x2 with the given terms; y[1] an
// ordinary sum beside it (0.875).
Case three_terms(double a, double b, double c) {
  Case k = conv_case({.batch = 1, .channels = 3, .out_channels = 1, .spatial = {2}, .kernel = {1}});
  k.dtype = DType::kF32;
  k.tensors["x"] = Tensor{DType::kF32, {1, 3, 2}, {a, 0.5, b, 0.25, c, 0.125}};
  k.tensors["w"] = Tensor{DType::kF32, {1, 3, 1}, {1.0, 1.0, 1.0}};
  k.tensors["dy"] = Tensor{DType::kF32, {1, 1, 2}, {1.0, 1.0}};
  return k;
}

// max + max - max passes f32's range on the way in some orders: NaN there is a correct
// kernel's (allowed, no cause named); where the terms stay within the range it fails.
TEST(NonfiniteOrigin, AnOverflowedPartialSumIsAllowedAndNamesNoCause) {
  const double max = std::numeric_limits<float>::max();
  PlantedForward be(Plant::kSumNaN);
  const CheckResult past = run_check(three_terms(max, max, -max), be, "forward");
  EXPECT_EQ(past.disposition, Disposition::kPassed) << describe(past);
  EXPECT_THAT(past.message, HasSubstr("partial sums may overflow"));
  const CheckResult within = run_check(three_terms(max / 4, max / 4, -max / 4), be, "forward");
  EXPECT_EQ(within.disposition, Disposition::kFailed) << describe(within);
  // Terms past half of f32's largest value: an accumulator with less range overflowed.
  EXPECT_THAT(within.message, HasSubstr("a sum that overflowed early (a narrower or scaled accumulator?)"));
  EXPECT_THAT(within.message, Not(HasSubstr("out-of-window")));
  // The near miss: small terms and every input finite: nothing is named.
  const CheckResult small = run_check(three_terms(1.0, 2.0, 3.0), be, "forward");
  EXPECT_EQ(small.disposition, Disposition::kFailed) << describe(small);
  EXPECT_THAT(small.message, HasSubstr("although every input is finite"));
  EXPECT_THAT(small.message, HasSubstr("cause unclassified"));
  EXPECT_THAT(small.message, Not(HasSubstr("overflowed early")));
  EXPECT_THAT(small.message, Not(HasSubstr("out-of-window")));
}

// f16 1x1 conv over two channels: y = x0 + x1.
Case f16_sums(std::initializer_list<double> x) {
  Case c = conv_case({.batch = 1, .channels = 2, .out_channels = 1, .spatial = {2}, .kernel = {1}});
  c.dtype = DType::kF16;
  c.tensors["x"] = Tensor{DType::kF16, {1, 2, 2}, HostVector<double>(x)};
  c.tensors["w"] = Tensor{DType::kF16, {1, 2, 1}, {1.0, 1.0}};
  c.tensors["dy"] = Tensor{DType::kF16, {1, 1, 2}, {1.0, 2.0}};
  return c;
}

TEST(NonfiniteOrigin, AnEarlyOverflowInTheStoreIsNamedAConversionNotARead) {
  PlantedForward be(Plant::kOverflowPastMax);
  // y = [65504 + 8, 65504 + 16] = [65512 -> 65504, 65520 -> inf]. (A sum closer to the
  // threshold is within the tolerance of inf: an f32 sum's error could cross it.)
  const CheckResult r = run_check(f16_sums({65504, 65504, 8, 16}), be, "forward");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("y: inf at 1 outputs where the oracle's sum 65512 rounds to the largest "
                                   "finite f16 value"));
  EXPECT_THAT(r.message, Not(HasSubstr("out-of-window")));
  // The near miss: y = [65520 -> inf, 3], the threshold's sum, whose inf is right.
  PlantedForward none(Plant::kNone);
  EXPECT_EQ(run_check(f16_sums({65504, 1, 16, 2}), none, "forward").disposition, Disposition::kPassed);
  const CheckResult at = run_check(f16_sums({65504, 1, 16, 2}), be, "forward");
  EXPECT_EQ(at.disposition, Disposition::kPassed) << describe(at);
}

}  // namespace
}  // namespace kc
