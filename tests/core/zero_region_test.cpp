// Zero regions of case data (`data: zero:`): the fill sets exactly the region to 0 and
// leaves every other element as the plain fill made it, for x, w and dy, whole
// samples, planes, channels and boxes; inline tensors win; validation refuses a region
// outside its tensor, naming the field and the rule.
#include <gtest/gtest.h>

#include <cmath>

#include "core/fill.h"
#include "core/validate.h"
#include "core/zero_region.h"
#include "support/case_builders.h"

namespace kc {
namespace {

Case conv3x2() {  // x [3, 4, 6, 5], w [6, 2, 3, 2], dy [3, 6, 4, 4]
  Case c = test::conv_case({.batch = 3,
                            .channels = 4,
                            .out_channels = 6,
                            .groups = 2,
                            .spatial = {6, 5},
                            .kernel = {3, 2},
                            .bias = true,
                            .dtype = DType::kF32});
  c.data = {11, Fill::kRandom, {}};
  return c;
}

// Whether element `flat` of a tensor of `shape` lies in region r, by coordinates.
bool inside(const ZeroRegion& r, const Dims& shape, int64_t flat) {
  std::vector<int64_t> at(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    at[a] = flat % shape[a];
    flat /= shape[a];
  }
  if (r.sample && at[0] != *r.sample) return false;
  if (r.channel && at[1] != *r.channel) return false;
  for (size_t d = 0; d < r.box.size(); ++d) {
    if (at[d + 2] < r.box[d][0] || at[d + 2] >= r.box[d][1]) return false;
  }
  return true;
}

// With the region, `t` is 0 exactly inside it and equal to the plain fill outside.
void expect_zeroed_exactly(const Tensor& plain, const Tensor& t, const ZeroRegion& r) {
  ASSERT_EQ(plain.shape, t.shape);
  int64_t zeroed = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    if (inside(r, t.shape, i)) {
      EXPECT_EQ(t[i], 0.0) << "element " << i;
      EXPECT_FALSE(std::signbit(t[i])) << "element " << i << " is -0";
      ++zeroed;
    } else {
      EXPECT_EQ(t[i], plain[i]) << "element " << i;
    }
  }
  EXPECT_GT(zeroed, 0);
  EXPECT_LT(zeroed, t.size());
}

TEST(ZeroRegion, FillZeroesExactlyTheRegion) {
  const Case plain_case = conv3x2();
  const OpInputs plain = *make_inputs(plain_case);
  const std::vector<ZeroRegion> regions = {
      {ZeroTensor::kX, 1, std::nullopt, {}},                            // a whole sample
      {ZeroTensor::kX, 2, 3, {}},                                       // a plane
      {ZeroTensor::kX, std::nullopt, 0, {}},                            // a channel across the batch
      {ZeroTensor::kX, std::nullopt, std::nullopt, {{1, 4}, {2, 3}}},   // a box in every plane
      {ZeroTensor::kDy, 0, 2, {}},                                      // a dy plane
      {ZeroTensor::kDy, std::nullopt, std::nullopt, {{0, 2}, {2, 4}}},  // an output tile
      {ZeroTensor::kW, 5, std::nullopt, {}},                            // one output channel's filters
      {ZeroTensor::kW, std::nullopt, 1, {{2, 3}, {0, 1}}},              // a tap of one input channel
  };
  for (const ZeroRegion& r : regions) {
    Case c = plain_case;
    c.data.zero = {r};
    ASSERT_TRUE(validate(c).ok()) << validate(c).message();
    const OpInputs in = *make_inputs(c);
    SCOPED_TRACE(std::string(zero_tensor_name(r.tensor)));
    expect_zeroed_exactly(r.tensor == ZeroTensor::kX   ? plain.x
                          : r.tensor == ZeroTensor::kW ? plain.w
                                                       : plain.dy,
                          r.tensor == ZeroTensor::kX   ? in.x
                          : r.tensor == ZeroTensor::kW ? in.w
                                                       : in.dy,
                          r);
    // The other tensors keep their data: a region does not shift any stream.
    if (r.tensor != ZeroTensor::kX) {
      EXPECT_TRUE(bitwise_equal(plain.x, in.x));
    }
    if (r.tensor != ZeroTensor::kDy) {
      EXPECT_TRUE(bitwise_equal(plain.dy, in.dy));
    }
    EXPECT_TRUE(bitwise_equal(plain.b, in.b));
  }
}

TEST(ZeroRegion, RegionsAddUpAndReachEveryRank) {
  Case c = test::pool_case({.batch = 2, .channels = 2, .spatial = {4, 5, 6}, .kernel = {2, 2, 2}});
  const OpInputs plain = *make_inputs(c);
  c.data.zero = {{ZeroTensor::kX, 0, 1, {{1, 3}, {0, 5}, {4, 6}}}, {ZeroTensor::kX, 1, std::nullopt, {}}};
  ASSERT_TRUE(validate(c).ok()) << validate(c).message();
  const OpInputs in = *make_inputs(c);
  for (int64_t i = 0; i < in.x.size(); ++i) {
    const bool zero = inside(c.data.zero[0], in.x.shape, i) || inside(c.data.zero[1], in.x.shape, i);
    EXPECT_EQ(in.x[i], zero ? 0.0 : plain.x[i]) << "element " << i;
  }
}

TEST(ZeroRegion, InlineTensorsWin) {
  Case c = conv3x2();
  c.tensors["x"] = Tensor::filled(DType::kF32, {3, 4, 6, 5}, 0.5);
  c.data.zero = {{ZeroTensor::kX, 1, std::nullopt, {}}, {ZeroTensor::kDy, 1, std::nullopt, {}}};
  const OpInputs in = *make_inputs(c);
  for (double v : in.x.data) EXPECT_EQ(v, 0.5);
  const int64_t per = in.dy.size() / 3;
  for (int64_t i = per; i < 2 * per; ++i) EXPECT_EQ(in.dy[i], 0.0);
}

TEST(ZeroRegion, IntegerFillsStayExact) {
  Case c = conv3x2();
  c.data.fill = Fill::kInteger;
  c.tolerance.kind = ToleranceKind::kExact;
  c.data.zero = {{ZeroTensor::kX, 0, std::nullopt, {}}};
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
}

std::string refusal(const ZeroRegion& r, Case c = conv3x2()) {
  c.data.zero = {{ZeroTensor::kX, 0, std::nullopt, {}}, r};  // the second is the bad one
  const Status s = validate(c);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(ZeroRegion, ValidationNamesTheFieldAndTheRule) {
  EXPECT_EQ(refusal({ZeroTensor::kX, 3, std::nullopt, {}}), "data.zero[1].sample: 3 is outside x's batch 0 to 2");
  EXPECT_EQ(refusal({ZeroTensor::kX, -1, std::nullopt, {}}), "data.zero[1].sample: -1 is outside x's batch 0 to 2");
  EXPECT_EQ(refusal({ZeroTensor::kDy, std::nullopt, 6, {}}), "data.zero[1].channel: 6 is outside dy's channels 0 to 5");
  EXPECT_EQ(refusal({ZeroTensor::kW, 6, std::nullopt, {}}),
            "data.zero[1].sample: 6 is outside w's output channels 0 to 5");
  EXPECT_EQ(refusal({ZeroTensor::kW, std::nullopt, 2, {}}),
            "data.zero[1].channel: 2 is outside w's input channels per group 0 to 1");
  EXPECT_EQ(refusal({ZeroTensor::kX, std::nullopt, std::nullopt, {{0, 2}}}),
            "data.zero[1].box: has 1 entries but x has 2 spatial dims (one [lo, hi] per dim)");
  EXPECT_EQ(refusal({ZeroTensor::kDy, std::nullopt, std::nullopt, {{0, 2}, {3, 3}}}),
            "data.zero[1].box[1]: lo 3 >= hi 3 (a box is half-open, [lo, hi), and must not be empty)");
  EXPECT_EQ(refusal({ZeroTensor::kDy, std::nullopt, std::nullopt, {{0, 5}, {0, 1}}}),
            "data.zero[1].box[0]: [0, 5] is outside dy's output extent 4 in spatial dim 0 (0 <= lo < hi <= 4)");
  EXPECT_EQ(refusal({ZeroTensor::kX, std::nullopt, std::nullopt, {{-1, 2}, {0, 1}}}),
            "data.zero[1].box[0]: [-1, 2] is outside x's input extent 6 in spatial dim 0 (0 <= lo < hi <= 6)");
  const Case pool = test::pool_case({.batch = 1, .channels = 1, .spatial = {4}, .kernel = {2}});
  EXPECT_EQ(refusal({ZeroTensor::kW, std::nullopt, std::nullopt, {}}, pool),
            "data.zero[1].tensor: op maxpool has no input w");
}

TEST(ZeroRegion, StackRefusesRegions) {
  Case c;
  c.input = InputSpec{2, 1, {8}};
  StackParams p;
  p.depth = 2;
  p.conv.kernel = {3};
  p.conv.padding = test::pad_kind(PadKind::kSame);
  c.op = p;
  ASSERT_TRUE(validate(c).ok()) << validate(c).message();
  c.data.zero = {{ZeroTensor::kX, 0, std::nullopt, {}}};
  EXPECT_EQ(validate(c).message(),
            "data.zero: not supported for op stack (a stack fills its own inputs, layer by layer)");
}

}  // namespace
}  // namespace kc
