// The integrity check: unwritten outputs, written inputs and broken guard bands are
// caught and named; a correct backend passes.
#include <gtest/gtest.h>

#include "core/validate.h"
#include "rules_support.h"

using namespace kc;
using namespace kc::rules_test;

TEST(IntegrityCheck, PassThroughWritesEverythingAndKeepsItsInputs) {
  PassThrough pass;
  const std::vector<Case> cases = good_cases();
  for (const Case& c : cases) {
    SCOPED_TRACE(case_to_one_line(c));
    EXPECT_DISPOSITION(run_check(c, pass, "integrity"), Disposition::kPassed);
  }
  auto oracle = make_reference_backend();
  EXPECT_DISPOSITION(run_check(cases[0], *oracle, "integrity"), Disposition::kSkipped);
}

TEST(IntegrityCheck, NamesTheBorderLeftByValidWhereSameWasAsked) {
  const Case c = with_fill(
      test::conv_case(
          {.channels = 2, .out_channels = 2, .spatial = {8, 8}, .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  ValidForSame be;
  expect_check(c, be, "integrity", Disposition::kFailed,
               {"y: 56 of 128 elements never written",
                "border outputs not written: y rows 0 and 7 and columns 0 and 7 (the border)"});
}

TEST(IntegrityCheck, NamesAnUnwrittenBorderColumn) {
  const Case c = with_fill(
      test::conv_case(
          {.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  SkipsLastColumn be;
  expect_check(c, be, "integrity", Disposition::kFailed,
               {"y: 12 of 96 elements never written", "y column 7 (the border)"});
}

// The poison survives the tensors' rounding to every dtype: an element left unwritten
// is named in f32, f16 and bf16 as in f64.
TEST(IntegrityCheck, NamesUnwrittenElementsInEveryDtype) {
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    EXPECT_TRUE(is_poison(round_to(d, poison_value())));
    EXPECT_TRUE(is_poison(poisoned(d, {2})[1]));
    const Case c = with_fill(test::conv_case({.channels = 1,
                                              .out_channels = 2,
                                              .spatial = {6, 8},
                                              .kernel = {3, 3},
                                              .padding = pad_kind(PadKind::kSame),
                                              .dtype = d}),
                             Fill::kRandom);
    SkipsLastColumn be;
    expect_check(c, be, "integrity", Disposition::kFailed, {"y: 12 of 96 elements never written"});
  }
}

TEST(IntegrityCheck, CatchesABackendThatWritesIntoItsInput) {
  WritesIntoInput be;
  expect_check(good_conv_cases()[1], be, "integrity", Disposition::kFailed,
               {"the backend wrote into its input x during the checked run: 1 of", "first at (0, 0, 0, 1)"});
}

TEST(IntegrityCheck, CatchesPoisonIndicesLeftInTrainingMode) {
  PoolKeepsNoIndices be;
  expect_check(good_pool_cases()[1], be, "integrity", Disposition::kFailed,
               {"indices: 252 of 252 never written (still the poison value)"});
}

TEST(IntegrityCheck, CatchesAResizedOutputBuffer) {
  ResizesOutput be;
  expect_check(good_conv_cases()[0], be, "integrity", Disposition::kFailed, {"never resizes or reshapes it"});
}

// Guard bands (host_buffer.h): writes outside a buffer are named with the buffer, the
// side and the offset, while the values in the buffer are all right.
TEST(IntegrityCheck, CatchesAWritePastTheEndOfAnOutput) {
  WritesPastTheEnd be;
  expect_check(good_conv_cases()[0], be, "integrity", Disposition::kFailed,
               {"y: the guard band around the buffer was overwritten",
                "after the last element changed, the first of them right after it (where element 33 would be, counting "
                "from 0); the backend wrote outside the 33 elements"});
  EXPECT_DISPOSITION(run_check(good_conv_cases()[0], be, "forward"), Disposition::kPassed);
}

TEST(IntegrityCheck, CatchesAWriteBeforeTheStartOfAnOutput) {
  PoolWritesBeforeStart be;
  expect_check(good_pool_cases()[1], be, "integrity", Disposition::kFailed,
               {"dx: the guard band around the buffer was overwritten: 8 bytes before the first element changed, the "
                "nearest 1 byte before it"});
}

TEST(IntegrityCheck, CatchesAnOutputBufferReplacedByAnother) {
  ReplacesOutputBuffer be;
  expect_check(good_conv_cases()[0], be, "integrity", Disposition::kFailed,
               {"y: the backend replaced the buffer it was given with another one"});
  EXPECT_DISPOSITION(run_check(good_conv_cases()[0], be, "forward"), Disposition::kPassed);
}

TEST(IntegrityCheck, CatchesAnOverrunInTheSecondRunOnly) {
  OverrunsOnTheSecondCall be;
  expect_check(good_conv_cases()[0], be, "integrity", Disposition::kFailed,
               {"y (in a second run on a copy): the guard band around the buffer was overwritten",
                "the first of them 8 bytes past the end (where element 34 would be, counting from 0)"});
}

// A backward that writes past the end of dw only for a single sample: the runner's call
// (batch 2) is clean, weight_share's per-sample runs are not.
class OverrunsDwOfOneSample final : public test::DelegatingBackend {
 public:
  OverrunsDwOfOneSample() : DelegatingBackend("overruns-dw-of-one-sample") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (g.batch == 1) dw.data.data()[dw.size()] = 0.0;  // into the guard band
    return ok_status();
  }
};

TEST(IntegrityCheck, NamesAGuardBandDamagedInACheckOwnRun) {
  Case c = good_conv_cases()[1];  // batch 2
  c.checks = {"weight_share", "integrity"};
  OverrunsDwOfOneSample be;
  const CaseResult r = check_case(c, be);
  bool named = false;
  for (const CheckResult& cr : r.checks) {
    if (cr.name != "integrity") continue;
    EXPECT_DISPOSITION(cr, Disposition::kFailed);
    named = cr.message.find("in a check's own run, dw in conv_backward:") != std::string::npos;
    EXPECT_TRUE(named) << cr.message;
  }
  EXPECT_TRUE(named);
  PassThrough pass;
  for (const CheckResult& cr : check_case(c, pass).checks) EXPECT_NE(cr.disposition, Disposition::kFailed);
}

// dw summed onto its buffer (dw +=) without clearing it: the poison stays NaN, which the
// value cannot tell from an element never written, so the message names both.
class AddsIntoDw : public DelegatingBackend {
 public:
  AddsIntoDw() : DelegatingBackend("adds-into-dw") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    const Tensor before = dw;
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    for (int64_t i = 0; i < dw.size(); ++i) dw[i] += before[i];
    return ok_status();
  }
};

TEST(IntegrityCheck, NamesADwAddedOntoItsUnclearedBuffer) {
  const Case c =
      with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {6}, .kernel = {3}}), Fill::kRandom);
  AddsIntoDw be;
  expect_check(c, be, "integrity", Disposition::kFailed,
               {"dw: 12 of 12 elements never written, or added to (+=) without being cleared first"});
}
