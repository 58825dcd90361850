// The argmax check (docs/checks.md): the oracle and a pass-through backend pass on
// every rank, tie and special fills, overlapping windows and ceil_mode; each planted
// max-pool bug is caught with the diagnosis that names it.
#include <gtest/gtest.h>

#include <limits>

#include "rules_support.h"

using namespace kc;
using namespace kc::rules_test;

// ---- argmax ----------------------------------------------------------------------------

TEST(ArgmaxCheck, OracleAndPassThroughPassOnRanksTiesSpecialOverlapCeil) {
  auto oracle = make_reference_backend();
  PassThrough pass;
  for (const Case& c : good_pool_cases()) {
    SCOPED_TRACE(case_to_one_line(c));
    EXPECT_DISPOSITION(run_check(c, *oracle, "argmax"), Disposition::kPassed);
    EXPECT_DISPOSITION(run_check(c, pass, "argmax"), Disposition::kPassed);
  }
}

TEST(ArgmaxCheck, IsSkippedForConvWithTheReason) {
  PassThrough pass;
  expect_check(good_conv_cases()[0], pass, "argmax", Disposition::kSkipped, {"max pooling only"});
}

TEST(ArgmaxCheck, CatchesTrainingForwardThatKeepsNoIndices) {
  PoolKeepsNoIndices be;
  expect_check(good_pool_cases()[1], be, "argmax", Disposition::kFailed,
               {"was never written (still the poison value)", "gradient is lost or duplicated",
                "backward without indices was not refused"});
}

TEST(ArgmaxCheck, CatchesTieLastWhenFirstIsAsked) {
  const Case c = pool_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {1, 1}, .fill = Fill::kTies});
  PoolWithTie be(TieRule::kLast);
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"tie rule first: the index of window (0, 0, ", "the first is at input ("});
}

TEST(ArgmaxCheck, AcceptsTieLastWhenAnyIsAskedAndCatchesFirstWhenLastIsAsked) {
  Case c =
      pool_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {1, 1}, .tie = TieRule::kAny, .fill = Fill::kTies});
  PoolWithTie last(TieRule::kLast);
  EXPECT_DISPOSITION(run_check(c, last, "argmax"), Disposition::kPassed);
  std::get<MaxPoolParams>(c.op).tie = TieRule::kLast;
  PassThrough pass;  // computes the rule the case asks for: last
  PoolWithTie tie_first(TieRule::kFirst);
  expect_check(c, tie_first, "argmax", Disposition::kFailed, {"tie rule last:", "the last is at input ("});
  EXPECT_DISPOSITION(run_check(c, pass, "argmax"), Disposition::kPassed);
}

TEST(ArgmaxCheck, CatchesOverlappingWindowsThatOverwrite) {
  const Case c = pool_case({.spatial = {7, 7}, .kernel = {3, 3}, .stride = {1, 1}, .pads = {{1, 1}, {1, 1}}});
  PoolOverwrites be;
  const CheckResult r = run_check(c, be, "argmax");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "overlapping windows overwrite instead of adding");
  EXPECT_FALSE(r.worst.empty());
}

// One window skipped in the backward (its dy never added): where it shares an input with
// another window, dx is the other's dy, which an overwrite also leaves; but the other
// shared inputs add up, so it is not named an overwrite.
class PoolSkipsOneWindow : public DelegatingBackend {
 public:
  PoolSkipsOneWindow() : DelegatingBackend("pool-skips-one-window") {}
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices == nullptr) return failed_precondition("no indices");
    const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
    for (double& v : dx.data) v = 0.0;
    for (int64_t w = 0; w < dy.size(); ++w) {
      if (w != 4) dx[(w / out) * in + indices->data[static_cast<size_t>(w)]] += dy[w];  // window 4 is skipped
    }
    return ok_status();
  }
};

TEST(ArgmaxCheck, ASkippedWindowIsNotCalledAnOverwrite) {
  // k3 s1: windows 1-3 all take x[3] = 8, windows 4 and 5 take x[6] = 7. Skipping window
  // 4 leaves dx[6] = dy[5], one share; dx[3] adds up. An overwrite leaves one share at both.
  Case c = pool_case({.spatial = {1, 8}, .kernel = {1, 3}, .stride = {1, 1}});
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 1, 8}, {9, 1, 2, 8, 1, 2, 7, 1}};
  c.tensors["dy"] = Tensor{DType::kF64, {1, 1, 1, 6}, {1.0, 2.0, 4.0, 8.0, 16.0, 32.0}};
  PoolSkipsOneWindow be;
  const CheckResult r = run_check(c, be, "argmax");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_EQ(r.message.find("overwrite instead of adding"), std::string::npos) << r.message;
  PoolOverwrites over;
  EXPECT_MESSAGE_HAS(run_check(c, over, "argmax"), "overlapping windows overwrite instead of adding");
}

// In f16 or bf16, a 16-bit accumulator loses small dy beside a large one, which could pass
// for an overwrite: it is named as what it is, and an overwrite in f16 still as an overwrite.
TEST(ArgmaxCheck, NamesADxSummedInTheStorageDtype) {
  for (DType d : {DType::kF16, DType::kBF16}) {
    const Case c = pool_case(
        {.channels = 2, .spatial = {7, 7}, .kernel = {3, 3}, .stride = {1, 1}, .pads = {{1, 1}, {1, 1}}, .dtype = d});
    for (bool reverse : {false, true}) {  // in window order and in its reverse
      PoolSumsInStorage narrow(false, reverse);
      const CheckResult r = run_check(c, narrow, "argmax");
      EXPECT_DISPOSITION(r, Disposition::kFailed);
      EXPECT_MESSAGE_HAS(r, "dx summed in " + std::string(dtype_name(d)) + ", rounding after every add");
      EXPECT_EQ(r.message.find("overwrite"), std::string::npos) << r.message;
    }
    PoolSumsInStorage overwrites(true);
    const CheckResult o = run_check(c, overwrites, "argmax");
    EXPECT_MESSAGE_HAS(o, "overlapping windows overwrite instead of adding");
    EXPECT_EQ(o.message.find("rounding after every add"), std::string::npos) << o.message;
  }
}

TEST(ArgmaxCheck, CatchesAKernelThatIgnoresNaN) {
  const Case c = pool_case({.channels = 2, .spatial = {8, 8}, .kernel = {2, 2}, .fill = Fill::kSpecial});
  ASSERT_TRUE(any_nan(inputs_of(c).x)) << "the special fill must put a NaN in some window";
  PoolIgnoresNaN be;
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"NaN rule: max pool never selects NaN: window (0, ", "a window with a NaN must give NaN"});
}

// A running maximum replaced on `x > max || isnan(x)` (PyTorch's CPU max pool): the
// last NaN of a window wins; under tie first that is named, under tie any it passes.
TEST(ArgmaxCheck, NamesAMaxPoolThatKeepsTheLastNaN) {
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  Case c = pool_case({.spatial = {8}, .kernel = {4}, .stride = {4}});
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 8}, {1.0, kNan, 2.0, kNan, 0.5, 2.0, -1.0, 3.0}};
  class KeepsLastNaN : public DelegatingBackend {
   public:
    KeepsLastNaN() : DelegatingBackend("pool-keeps-last-nan") {}
    Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* idx) override {
      KC_RETURN_IF_ERROR(reference().maxpool_forward(g, x, y, idx));
      if (idx != nullptr) idx->data[0] = 3;  // window 0's last NaN
      return ok_status();
    }
  } be;
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"tie rule first: the index of window (0, 0, 0) points to the 2nd of 2 NaNs of the window (input "
                "(3)), the first is at input (1): max pool keeps the last NaN"});
  std::get<MaxPoolParams>(c.op).tie = TieRule::kAny;
  EXPECT_DISPOSITION(run_check(c, be, "argmax"), Disposition::kPassed);
}

// A running maximum that starts at the lowest finite value instead of -inf.
class PoolStartsAtLowest final : public DelegatingBackend {
 public:
  PoolStartsAtLowest() : DelegatingBackend("pool-starts-at-lowest") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    KC_RETURN_IF_ERROR(reference().maxpool_forward(g, x, y, indices));
    for (double& v : y.data) v = v == -kInf ? -std::numeric_limits<float>::max() : v;
    return ok_status();
  }
};

TEST(ArgmaxCheck, NamesAWindowOfOnlyMinusInfThatGivesTheLowestFiniteValue) {
  Case c = pool_case({.spatial = {8}, .kernel = {2}, .stride = {2}, .dtype = DType::kF32});
  c.tensors["x"] = Tensor{DType::kF32, {1, 1, 8}, {-kInf, -kInf, 1.0, -kInf, 0.5, 2.0, -1.0, 3.0}};
  PoolStartsAtLowest be;
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"window of only -inf gives the lowest finite value: y of window (0, 0, 0) is -3.40282347e+38"});
}

TEST(ArgmaxCheck, CatchesIndexMinusOneForAnAllMinusInfWindow) {
  Case c = pool_case({.spatial = {8}, .kernel = {2}, .stride = {2}});
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 8}, {-kInf, -kInf, -kInf, -kInf, 0.5, 2.0, -1.0, 3.0}};
  PoolMinusOneForAllMinusInf be;
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"index -1 of window (0, 0, 0) is outside its (n, c) plane [0, 8)",
                "a window of only -inf must point to one of its elements inside the input (by the tie rule)"});
  auto oracle = make_reference_backend();
  EXPECT_DISPOSITION(run_check(c, *oracle, "argmax"), Disposition::kPassed);
}

TEST(ArgmaxCheck, AWindowOfOnlyMinusInfFollowsTheTieRule) {
  // Windows [0, 2), [2, 4), ...: the first two hold only -inf, the third a tie of 0.5s.
  Case c = pool_case({.spatial = {8}, .kernel = {2}, .stride = {2}, .tie = TieRule::kLast});
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 8}, {-kInf, -kInf, -kInf, -kInf, 0.5, 0.5, -1.0, 3.0}};
  // `v == best && v != -inf` in the scan: a window of only -inf keeps its first element.
  class MinusInfKeepsFirst : public DelegatingBackend {
   public:
    MinusInfKeepsFirst() : DelegatingBackend("pool-minus-inf-keeps-first") {}
    Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* idx) override {
      KC_RETURN_IF_ERROR(reference().maxpool_forward(g, x, y, idx));
      for (int64_t w = 0; w < y.size(); ++w) {
        if (idx != nullptr && y[w] == -kInf) idx->data[static_cast<size_t>(w)] = 2 * w;  // the window's first
      }
      return ok_status();
    }
  } be;
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"tie rule last: the index of window (0, 0, 0) points to the 1st of 2 elements, all -inf, of the "
                "window (input (0)), the last is at input (1)"});
  auto oracle = make_reference_backend();
  EXPECT_DISPOSITION(run_check(c, *oracle, "argmax"), Disposition::kPassed);
  PassThrough pass;
  EXPECT_DISPOSITION(run_check(c, pass, "argmax"), Disposition::kPassed);
  // Under `first` the same kernel is right; under `any` every element of the window is.
  std::get<MaxPoolParams>(c.op).tie = TieRule::kFirst;
  EXPECT_DISPOSITION(run_check(c, be, "argmax"), Disposition::kPassed);
  std::get<MaxPoolParams>(c.op).tie = TieRule::kAny;
  EXPECT_DISPOSITION(run_check(c, be, "argmax"), Disposition::kPassed);
}

TEST(ArgmaxCheck, CatchesIndicesCountingThePlaneOffset) {
  const Case c = pool_case({.batch = 2, .channels = 2, .spatial = {4, 4}, .kernel = {2, 2}});
  PoolBatchOffset be;
  expect_check(c, be, "argmax", Disposition::kFailed,
               {"of window (0, 1, 0, 0) includes the offset 16 of its (n, c) plane"});
  // forward names a wrong index by its coordinates in y, as golden does.
  const CheckResult fwd = run_check(c, be, "forward");
  EXPECT_DISPOSITION(fwd, Disposition::kFailed);
  ASSERT_FALSE(fwd.worst.empty());
  EXPECT_EQ(fwd.worst[0].tensor, "indices");
  EXPECT_EQ(fwd.worst[0].index, (std::vector<int64_t>{0, 1, 0, 0}));
}

TEST(ArgmaxCheck, CatchesBackwardWithoutIndicesThatReturnsZeros) {
  for (PoolMode mode : {PoolMode::kTraining, PoolMode::kInference}) {
    const Case c =
        pool_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 1}, {1, 1}}, .mode = mode});
    PoolBackwardWithoutIndicesIsZero be;
    expect_check(c, be, "argmax", Disposition::kFailed,
                 {"backward without indices was not refused: it would silently give zero gradients"});
  }
}

TEST(ArgmaxCheck, CatchesPaddingReadAsZeroOnNegativeInputs) {
  Case c = pool_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 1}, {1, 1}}});
  Tensor x = inputs_of(c).x;
  for (double& v : x.data) v = -1.0 - std::abs(v);
  c.tensors["x"] = x;
  PoolPadsZero be;
  expect_check(c, be, "argmax", Disposition::kFailed, {"y of window (0, 0, 0, 0) is 0 but the window maximum is -"});
}

TEST(ArgmaxCheck, MistrustsAnAllZeroDy) {
  Case c = pool_case({.spatial = {6, 6}, .kernel = {2, 2}});
  c.tensors["dy"] = Tensor::zeros(DType::kF64, {1, 1, 3, 3});
  PassThrough pass;
  EXPECT_DISPOSITION(run_check(c, pass, "argmax"), Disposition::kMistrusted);
}
