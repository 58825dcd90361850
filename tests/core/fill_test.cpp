// The data fills: element i is a pure function of (seed, tensor, i), so the same seed
// gives the same data whatever the thread or order; integer fills keep every sum the
// op forms exact in the storage dtype; special and ties fills hold what they promise.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <thread>

#include "core/fill.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "support/case_builders.h"

namespace kc {
namespace {

Case conv(DType dtype, Fill fill, PaddingMode mode = PaddingMode::kZeros) {
  Case c = test::conv_case({.batch = 3,
                            .channels = 16,
                            .out_channels = 8,
                            .spatial = {12, 12},
                            .kernel = {3, 3},
                            .padding = test::explicit_pad({{2, 2}, {2, 2}}),
                            .mode = mode,
                            .bias = true,
                            .dtype = dtype});
  c.data = {42, fill};
  return c;
}

TEST(Fill, SameSeedSameDataDifferentSeedDifferentData) {
  const OpInputs a = *make_inputs(conv(DType::kF32, Fill::kRandom));
  const OpInputs b = *make_inputs(conv(DType::kF32, Fill::kRandom));
  EXPECT_TRUE(bitwise_equal(a.x, b.x) && bitwise_equal(a.w, b.w) && bitwise_equal(a.dy, b.dy));
  Case other = conv(DType::kF32, Fill::kRandom);
  other.data.seed = 43;
  EXPECT_FALSE(bitwise_equal(a.x, make_inputs(other)->x));
  // Each tensor has its own stream: w is not a copy of the start of x.
  EXPECT_FALSE(std::equal(a.w.data.begin(), a.w.data.end(), a.x.data.begin()));
}

TEST(Fill, IndependentOfThreadsAndOrder) {
  const Case c = conv(DType::kF64, Fill::kNormal);
  const OpInputs serial = *make_inputs(c);
  std::vector<OpInputs> parallel(4);
  std::vector<std::thread> threads;
  for (auto& out : parallel) threads.emplace_back([&c, &out] { out = *make_inputs(c); });
  for (auto& t : threads) t.join();
  for (const OpInputs& p : parallel) EXPECT_TRUE(bitwise_equal(serial.x, p.x) && bitwise_equal(serial.w, p.w));
  // Element i depends on i alone: drawing in reverse order gives the same numbers.
  std::vector<double> forward, backward;
  for (uint64_t i = 0; i < 100; ++i) forward.push_back(uniform01(42, 1, i));
  for (uint64_t i = 100; i-- > 0;) backward.insert(backward.begin(), uniform01(42, 1, i));
  EXPECT_EQ(forward, backward);
}

TEST(Fill, ValuesAreRepresentableInTheCaseDtype) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    const OpInputs in = *make_inputs(conv(d, Fill::kNormal));
    for (const Tensor* t : {&in.x, &in.w, &in.b, &in.dy}) {
      EXPECT_EQ(t->dtype, d);
      for (double v : t->data) ASSERT_EQ(round_to(d, v), v) << dtype_name(d);
    }
  }
}

// Every output of the reference forward and backward is an integer within the exact
// range of the storage dtype, so a correct kernel reproduces it bitwise.
void expect_exact_outputs(const Case& c) {
  const ConvGeometry g = *conv_geometry(c);
  const OpInputs in = *make_inputs(c);
  const Tensor y = ref::conv_forward(g, in.x, in.w, &in.b);
  const ref::ConvGrads gr = ref::conv_backward(g, in.x, in.w, in.dy);
  int64_t nonzero = 0;
  for (const Tensor* t : {&y, &gr.dx, &gr.dw, &gr.db}) {
    for (double v : t->data) {
      ASSERT_EQ(v, std::round(v));
      ASSERT_LE(std::abs(v), static_cast<double>(exact_integer_limit(c.dtype)));
      ASSERT_EQ(round_to(c.dtype, v), v);
      nonzero += v != 0.0;
    }
  }
  EXPECT_GT(nonzero, 20) << "an integer fill that is all zero checks nothing";
}

TEST(Fill, IntegerFillKeepsEverySumExact) {
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    for (PaddingMode m : {PaddingMode::kZeros, PaddingMode::kReplicate, PaddingMode::kCircular}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + std::string(padding_mode_name(m)));
      expect_exact_outputs(conv(d, Fill::kInteger, m));
    }
  }
}

TEST(Fill, SpecialFillHoldsEveryKindOfSpecialValue) {
  Case c = conv(DType::kF16, Fill::kSpecial);
  const OpInputs in = *make_inputs(c);
  int nan = 0, pinf = 0, ninf = 0, nzero = 0, subnormal = 0;
  for (double v : in.x.data) {
    nan += std::isnan(v);
    pinf += v == INFINITY;
    ninf += v == -INFINITY;
    nzero += v == 0.0 && std::signbit(v);
    subnormal += v != 0.0 && std::abs(v) < std::ldexp(1.0, -14);  // below f16's smallest normal
  }
  EXPECT_GT(nan, 0);
  EXPECT_GT(pinf, 0);
  EXPECT_GT(ninf, 0);
  EXPECT_GT(nzero, 0);
  EXPECT_GT(subnormal, 0);
  for (double v : in.w.data) EXPECT_TRUE(std::isfinite(v));  // specials go into x only
}

TEST(Fill, TiesFillUsesFourValues) {
  Case c;
  c.dtype = DType::kF32;
  c.input = {2, 3, {9, 9}};
  c.op = MaxPoolParams{{3, 3}, {2, 2}, {}, {}, false, PoolMode::kTraining, TieRule::kFirst};
  c.data = {5, Fill::kTies};
  const OpInputs in = *make_inputs(c);
  const std::set<double> values(in.x.data.begin(), in.x.data.end());
  EXPECT_EQ(values, (std::set<double>{-1.0, 0.0, 0.5, 1.0}));
}

TEST(Fill, InlineTensorsReplaceTheFillAndAreRounded) {
  Case c = test::conv_case({.spatial = {3}, .kernel = {2}, .dtype = DType::kBF16});
  c.tensors["x"] = Tensor::zeros(DType::kF64, {1, 1, 3});
  c.tensors["x"].data = {1.0, 1.00390625, 3.0};  // 1 + 2^-8 is not a bf16: rounds to 1
  const OpInputs in = *make_inputs(c);
  EXPECT_EQ(in.x.data, (kc::HostVector<double>{1.0, 1.0, 3.0}));
  EXPECT_EQ(in.x.dtype, DType::kBF16);
}

}  // namespace
}  // namespace kc
