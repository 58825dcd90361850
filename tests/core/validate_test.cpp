// Tests of validate.cpp: every rule of docs/ops.md and docs/cases.md gives an error naming
// the field and the rule; inline tensor shapes; pool window rules against brute force,
// and validation time linear in the number of windows.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/validate.h"
#include "core/validate_support.h"
#include "kc/case.h"
#include "kc/shape.h"

namespace kc {
namespace {

using namespace validate_test;

TEST(Validate, AcceptsValidCases) {
  expect_ok(conv_case());
  expect_ok(pool_case());
  Case cbr = conv_case();
  cbr.op = ConvBiasReluParams{conv(cbr)};
  expect_ok(cbr);
}

TEST(ValidateConv, GroupsMustDivideBothChannelCounts) {
  Case c = conv_case();
  c.input.channels = 8;
  conv(c).groups = 3;  // divides out_channels 6, not 8
  expect_error(c, StatusCode::kInvalidArgument, {"conv.groups", "3 does not divide input.channels 8"});
  conv(c).groups = 4;  // divides 8, not out_channels 6
  expect_error(c, StatusCode::kInvalidArgument, {"conv.groups", "4 does not divide", "out_channels 6"});
  conv(c).groups = 3;  // conv_bias_relu names its own field
  c.op = ConvBiasReluParams{conv(c)};
  expect_error(c, StatusCode::kInvalidArgument, {"conv_bias_relu.groups", "does not divide"});
}

TEST(ValidateConv, EmptyOutputWhenKernelExceedsPaddedInput) {
  Case c = conv_case();
  c.input.spatial = {8, 4};
  conv(c).kernel = {3, 7};  // W: 4 + 1 + 1 = 6 < 7
  expect_error(c, StatusCode::kInvalidArgument, {"conv", "empty output", "spatial dim 1", "extent 7"});
  conv(c).kernel = {3, 6};  // padded 6 == extent 6: one output
  expect_ok(c);
  conv(c).kernel = {3, 3};
  conv(c).dilation = {1, 3};  // extent 3*2+1 = 7 > 6
  expect_error(c, StatusCode::kInvalidArgument, {"empty output", "extent 7"});
}

TEST(ValidateConv, ReflectPaddingMustBeSmallerThanInput) {
  Case c = conv_case();
  c.input.spatial = {8, 4};
  conv(c).padding_mode = PaddingMode::kReflect;
  conv(c).padding.pairs = {{1, 1}, {3, 3}};  // pad = in - 1: reflection without the edge fits
  expect_ok(c);
  conv(c).padding.pairs = {{1, 1}, {0, 4}};  // pad = in: would need the edge repeated
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding", "dim 1", "reflect", "smaller than the input extent"});
  conv(c).padding.pairs = {{8, 0}, {1, 1}};
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding", "dim 0", "reflect"});
}

TEST(ValidateConv, CircularPaddingMustNotExceedInput) {
  Case c = conv_case();
  c.input.spatial = {8, 4};
  conv(c).padding_mode = PaddingMode::kCircular;
  conv(c).padding.pairs = {{1, 1}, {4, 4}};  // pad = in: one full wrap is allowed
  expect_ok(c);
  conv(c).padding.pairs = {{1, 1}, {5, 0}};
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding", "dim 1", "circular", "must not exceed"});
  // Zeros and replicate padding have no such limit.
  conv(c).padding_mode = PaddingMode::kReplicate;
  conv(c).padding.pairs = {{9, 9}, {5, 5}};
  expect_ok(c);
}

TEST(ValidatePool, PaddingAtMostHalfTheWindowExtent) {
  Case c = pool_case();  // extent 3: at most 1
  pool(c).padding.pairs = {{1, 1}, {2, 1}};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool.padding", "dim 1", "more than half the window extent 3"});
  pool(c).kernel = {3, 4};  // extent 4: 2 is exactly half
  pool(c).padding.pairs = {{1, 1}, {2, 2}};
  expect_ok(c);
  pool(c).dilation = {1, 2};  // k 2, d 2: extent 3, half 1
  pool(c).kernel = {3, 2};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool.padding", "extent 3"});
}

TEST(ValidatePool, DilatedWindowTouchingNoInputIsRefused) {
  // in 1, k 2, d 3 (extent 4), pad 2/2 (exactly half: allowed by that rule), s 1:
  // padded 5, two windows; window 0 reads padded 0 and 3 = input -2 and 1, both padding.
  Case c = pool_case();
  c.input.spatial = {1};
  pool(c).kernel = {2};
  pool(c).stride = {1};
  pool(c).dilation = {3};
  pool(c).padding.pairs = {{2, 2}};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool", "window 0", "covers no input"});
  // pad 1/1: padded 3 < extent 4: empty output instead.
  pool(c).padding.pairs = {{1, 1}};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool", "empty output"});
  // in 2, pad 1/1: padded 4, one window reading input -1 and 2: touches nothing.
  c.input.spatial = {2};
  expect_error(c, StatusCode::kInvalidArgument, {"covers no input"});
  c.input.spatial = {3};  // padded 5, windows at input -1|2 and 0|3: both touch
  expect_ok(c);
}

TEST(ValidateFields, NonPositiveSizesNameTheField) {
  struct Row {
    const char* field;
    void (*edit)(Case&);
  };
  const Row rows[] = {
      {"input.batch", [](Case& c) { c.input.batch = 0; }},
      {"input.batch", [](Case& c) { c.input.batch = -3; }},
      {"input.channels", [](Case& c) { c.input.channels = 0; }},
      {"input.spatial[1]", [](Case& c) { c.input.spatial[1] = 0; }},
      {"input.spatial[0]", [](Case& c) { c.input.spatial[0] = -1; }},
      {"conv.out_channels", [](Case& c) { conv(c).out_channels = 0; }},
      {"conv.kernel[1]",
       [](Case& c) {
         conv(c).kernel = {3, 0};
       }},
      {"conv.stride[0]",
       [](Case& c) {
         conv(c).stride = {0, 1};
       }},
      {"conv.dilation[1]",
       [](Case& c) {
         conv(c).dilation = {1, -2};
       }},
      {"conv.groups", [](Case& c) { conv(c).groups = 0; }},
      {"maxpool.kernel[0]",
       [](Case& c) {
         c = pool_case();
         pool(c).kernel = {0, 3};
       }},
      {"maxpool.stride[1]",
       [](Case& c) {
         c = pool_case();
         pool(c).stride = {2, 0};
       }},
  };
  for (const Row& r : rows) {
    Case c = conv_case();
    r.edit(c);
    SCOPED_TRACE(r.field);
    expect_error(c, StatusCode::kInvalidArgument, {r.field, "must be at least 1"});
  }
}

TEST(ValidateFields, NegativePaddingNamesTheSide) {
  Case c = conv_case();
  conv(c).padding.pairs = {{1, 1}, {1, -1}};
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding[1][1]", "negative"});
  Case p = pool_case();
  pool(p).padding.pairs = {{-1, 0}, {0, 0}};
  expect_error(p, StatusCode::kInvalidArgument, {"maxpool.padding[0][0]", "negative"});
}

TEST(ValidateFields, RankOutsideOneToThree) {
  Case c = conv_case();
  c.input.spatial = {};
  expect_error(c, StatusCode::kInvalidArgument, {"input.spatial", "rank 0", "1 to 3"});
  c.input.spatial = {2, 3, 4, 5};
  expect_error(c, StatusCode::kInvalidArgument, {"input.spatial", "rank 4", "1 to 3"});
}

TEST(ValidateFields, PerDimListsMustMatchRank) {
  const std::pair<const char*, void (*)(Case&)> rows[] = {
      {"conv.kernel: has 1 entries", [](Case& c) { conv(c).kernel = {3}; }},
      {"conv.kernel: has 0 entries", [](Case& c) { conv(c).kernel = {}; }},
      {"conv.stride: has 3 entries",
       [](Case& c) {
         conv(c).stride = {1, 1, 1};
       }},
      {"conv.padding: has 1 entries",
       [](Case& c) {
         conv(c).padding.pairs = {{1, 1}};
       }},
      {"maxpool.dilation: has 1 entries",
       [](Case& c) {
         c = pool_case();
         pool(c).dilation = {1};
       }},
  };
  for (const auto& [want, edit] : rows) {
    Case c = conv_case();
    edit(c);
    expect_error(c, StatusCode::kInvalidArgument, {want, "input.spatial has rank 2"});
  }
}

TEST(ValidateTensors, InlineShapesMustMatchTheCase) {
  Case c = conv_case();  // x [2, 4, 8, 8], w [6, 2, 3, 3], y [2, 6, 8, 8]
  c.tensors["x"] = Tensor::zeros(DType::kF32, {2, 4, 8, 8});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});
  c.expected["y"] = Tensor::zeros(DType::kF32, {2, 6, 8, 8});
  expect_ok(c);
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 4, 3, 3});  // Cin instead of Cin/G
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.w", "[6, 4, 3, 3]", "needs [6, 2, 3, 3]"});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});
  c.expected["y"] = Tensor::zeros(DType::kF32, {2, 6, 6, 6});  // as if unpadded
  expect_error(c, StatusCode::kInvalidArgument, {"expected.y", "needs [2, 6, 8, 8]"});
  c.expected.erase("y");
  c.tensors["z"] = Tensor::zeros(DType::kF32, {1});
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.z", "unknown tensor", "conv"});
}

TEST(ValidateTensors, PoolIndicesAndGradientShapes) {
  Case c = pool_case();  // y: (9 + 2 - 3)/2 + 1 = 5 per dim
  c.expected["indices"] = Tensor::zeros(DType::kF64, {1, 2, 5, 5});
  c.expected["dx"] = Tensor::zeros(DType::kF64, {1, 2, 9, 9});
  c.tensors["dy"] = Tensor::zeros(DType::kF64, {1, 2, 5, 5});
  expect_ok(c);
  c.tensors["dy"] = Tensor::zeros(DType::kF64, {1, 2, 4, 4});
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.dy", "needs [1, 2, 5, 5]"});
  c.tensors.erase("dy");
  c.tensors["w"] = Tensor::zeros(DType::kF64, {1});
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.w", "unknown tensor for op maxpool"});
}

// `tolerance: exact` demands bitwise equality, which a correct kernel meets only where
// every sum is exact: with fill: random an f32 conv failed at "got -2.06351066, want
// -2.06351055 (bound 0)". Integer fills and inline inputs (the author's values) keep it.
TEST(ValidateTolerance, ExactNeedsIntegerFillOrEveryInputInline) {
  Case c = conv_case();  // no bias: x, w and dy
  c.tolerance.kind = ToleranceKind::kExact;
  for (Fill f : {Fill::kRandom, Fill::kNormal, Fill::kTies, Fill::kSpecial}) {
    c.data.fill = f;
    expect_error(c, StatusCode::kInvalidArgument,
                 {"tolerance: exact with fill: ", "needs fill: integer", "inline under tensors: (missing: x, w, dy)"});
  }
  c.data.fill = Fill::kInteger;
  expect_ok(c);
  c.data.fill = Fill::kRandom;
  c.tensors["x"] = Tensor::zeros(DType::kF32, {2, 4, 8, 8});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});
  expect_error(c, StatusCode::kInvalidArgument, {"tolerance: exact", "(missing: dy)"});
  c.tensors["dy"] = Tensor::zeros(DType::kF32, {2, 6, 8, 8});
  expect_ok(c);
  Case fused = c;  // conv_bias_relu always has a bias, which must be inline too
  fused.op = ConvBiasReluParams{conv(c)};
  expect_error(fused, StatusCode::kInvalidArgument, {"tolerance: exact", "(missing: b)"});
  fused.tensors["b"] = Tensor::zeros(DType::kF32, {6});
  expect_ok(fused);
  c.tolerance.kind = ToleranceKind::kBound;  // the other tolerances take any fill
  c.tensors.clear();
  expect_ok(c);
  Case stack;  // no inline tensors on a stack: only the integer fill
  stack.input = {1, 2, {8, 8}};
  stack.op = StackParams{3, ConvParams{2, {3, 3}, {}, {}, 1, {PadKind::kSame, {}}}};
  stack.tolerance.kind = ToleranceKind::kExact;
  const Status s = validate(stack);
  EXPECT_NE(s.message().find("tolerance: exact with fill: random"), std::string::npos) << s.to_string();
  EXPECT_EQ(s.message().find("tensors"), std::string::npos) << s.to_string();
  stack.data.fill = Fill::kInteger;
  expect_ok(stack);
}

// A max pool's y and indices are selections; its dx sums the dy of the windows whose
// taps share an input element: exact for one window, for two only in f64.
TEST(ValidateTolerance, ExactOnAMaxPoolFollowsItsOverlappingWindows) {
  auto pool1d = [](int64_t k, int64_t s, int64_t d, DType dtype) {
    Case c;
    c.dtype = dtype;
    c.input = {1, 2, {16}};
    c.op = MaxPoolParams{{k}, {s}, {d}, {}};
    c.tolerance.kind = ToleranceKind::kExact;
    return c;
  };
  expect_ok(pool1d(3, 3, 1, DType::kF32));  // disjoint windows
  expect_ok(pool1d(2, 3, 2, DType::kF32));  // taps 0, 2 and 3, 5: disjoint
  expect_ok(pool1d(3, 2, 1, DType::kF64));  // two windows share an element: exact in f64
  expect_error(pool1d(3, 2, 1, DType::kF32), StatusCode::kInvalidArgument,
               {"tolerance: exact with fill: random on this max pool", "two dy values", "(missing: x, dy)"});
  expect_error(pool1d(2, 2, 2, DType::kF32), StatusCode::kInvalidArgument, {"two dy values"});  // taps 0, 2 and 2, 4
  expect_error(pool1d(3, 1, 1, DType::kF64), StatusCode::kInvalidArgument, {"three or more dy values"});
  Case inference = pool1d(3, 1, 1, DType::kF32);  // no backward: nothing is summed
  pool(inference).mode = PoolMode::kInference;
  expect_ok(inference);
  Case two_d = pool_case();  // 3x3 stride 2: two windows per dim, four in the plane
  two_d.dtype = DType::kF64;
  two_d.tolerance.kind = ToleranceKind::kExact;
  expect_error(two_d, StatusCode::kInvalidArgument, {"three or more dy values"});
  two_d.data.fill = Fill::kInteger;
  expect_ok(two_d);
}

// A case whose checks compare no backward value needs no dy inline, and a max pool's y and
// indices are exact in any fill: only checks that judge gradients make exact demand more.
TEST(ValidateTolerance, ExactAsksOnlyForWhatTheCasesChecksCompare) {
  Case c = conv_case();
  c.tolerance.kind = ToleranceKind::kExact;
  c.tensors["x"] = Tensor::zeros(DType::kF32, {2, 4, 8, 8});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});
  c.checks = {"forward", "golden"};
  expect_ok(c);
  c.expected["dw"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});  // golden now compares a gradient
  expect_error(c, StatusCode::kInvalidArgument, {"tolerance: exact", "(missing: dy)"});
  c.expected.clear();
  c.checks = {"forward", "padding"};  // padding compares the backward of two runs
  expect_error(c, StatusCode::kInvalidArgument, {"(missing: dy)"});
  c.checks = {"forward"};
  c.tensors.erase("w");
  expect_error(c, StatusCode::kInvalidArgument, {"(missing: w)"});  // y is still a sum

  Case p;
  p.dtype = DType::kF32;
  p.input = {1, 2, {16}};
  p.op = MaxPoolParams{{3}, {1}, {1}, {}};
  p.tolerance.kind = ToleranceKind::kExact;
  p.checks = {"forward", "determinism", "padding"};  // a pool's padding check compares y and indices
  expect_ok(p);
  p.checks.push_back("argmax");
  expect_error(p, StatusCode::kInvalidArgument, {"three or more dy values"});
}

// Windows inside the input (valid padding): exact is accepted with a random fill iff
// no input element is a tap of two windows (of three, in f64), by brute force.
RC_GTEST_PROP(ValidateProp, ExactPoolRuleMatchesBruteForceOverlap, (bool f64)) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 40);
  const int64_t k = *rc::gen::inRange<int64_t>(1, 6);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 6);
  const int64_t d = *rc::gen::inRange<int64_t>(1, 5);
  RC_PRE(d * (k - 1) + 1 <= in);
  Case c;
  c.dtype = f64 ? DType::kF64 : DType::kF32;
  c.input = {1, 1, {in}};
  c.op = MaxPoolParams{{k}, {s}, {d}, {PadKind::kValid, {}}};
  c.tolerance.kind = ToleranceKind::kExact;
  const int64_t out = (in - d * (k - 1) - 1) / s + 1;
  int64_t most = 0;
  for (int64_t p = 0; p < in; ++p) {
    int64_t windows = 0;
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t t = 0; t < k; ++t) windows += o * s + t * d == p;
    }
    most = std::max(most, windows);
  }
  const Status st = validate(c, Limits{});
  RC_ASSERT(st.ok() == (most <= (f64 ? 2 : 1)));
}

// Pool windows that hold no input element, against a brute-force scan of every tap.
bool some_window_misses_input(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    bool touches = false;
    for (int64_t t = 0; t < k; ++t) touches |= o * s + t * d - lo >= 0 && o * s + t * d - lo < in;
    if (!touches) return true;
  }
  return false;
}

RC_GTEST_PROP(ValidateProp, PoolWindowRulesMatchBruteForce, (bool ceil_mode)) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 12);
  const int64_t k = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t d = *rc::gen::inRange<int64_t>(1, 6);
  const int64_t half = (d * (k - 1) + 1) / 2;
  const int64_t lo = *rc::gen::inRange<int64_t>(0, half + 1);
  const int64_t hi = *rc::gen::inRange<int64_t>(0, half + 1);
  Case c;
  c.input = {1, 1, {in}};
  c.op = MaxPoolParams{{k}, {s}, {d}, {PadKind::kExplicit, {{lo, hi}}}, ceil_mode};
  const int64_t out = output_extent(in, k, s, d, lo, hi, ceil_mode);
  const Status st = validate(c, Limits{});
  if (out < 1) {
    RC_ASSERT(st.message().find("empty output") != std::string::npos);
  } else if (some_window_misses_input(in, k, s, d, lo, out)) {
    RC_ASSERT(st.message().find("covers no input") != std::string::npos);
  } else {
    RC_ASSERT(st.ok());
  }
}

TEST(ValidatePool, LargeWindowValidatesInLinearTime) {
  // 1-D in 300000, window 300000, pad 150000 (exactly half): 300001 windows, each
  // touching the input. About 24 MB, under the cap. Scanning the taps of every window
  // would take ~10^10 steps; the check must be O(windows).
  Case c;
  c.input = {1, 2, {300'000}};
  c.op = MaxPoolParams{{300'000}, {1}, {}, {PadKind::kExplicit, {{150'000, 150'000}}}};
  Limits limits;
  limits.max_op_work = 1e12;  // 1.8e11 comparisons to run; validating them must stay linear
  const auto start = std::chrono::steady_clock::now();
  expect_ok(c, limits);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 500) << "validation took " << ms << " ms";
}

}  // namespace
}  // namespace kc
