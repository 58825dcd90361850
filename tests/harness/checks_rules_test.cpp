// The padding, determinism and integrity checks (DESIGN section 4): the oracle and a
// pass-through backend pass on every padding mode; each planted bug is caught with the
// diagnosis that names it. Every data-dependent test first asserts that its data can
// show the bug.
#include <gtest/gtest.h>

#include "kc/validate.h"
#include "rules_support.h"

using namespace kc;
using namespace kc::rules_test;

// ---- padding ---------------------------------------------------------------------------

TEST(PaddingCheck, OracleAndPassThroughPassOnConvModesAndPools) {
  auto oracle = make_reference_backend();
  PassThrough pass;
  std::vector<Case> cases = good_conv_cases();
  for (const Case& c : good_pool_cases()) cases.push_back(c);
  for (const Case& c : cases) {
    SCOPED_TRACE(case_to_one_line(c));
    EXPECT_DISPOSITION(run_check(c, *oracle, "padding"), Disposition::kPassed);
    EXPECT_DISPOSITION(run_check(c, pass, "padding"), Disposition::kPassed);
  }
}

// The padding and weight_share checks run copies of the case on inputs of their own.
// The copies keep the case's tolerance: with an explicit one, 16-bit accumulation over a
// sum too long for the bound model (256 dw terms at u = 2^-8) is a valid case, and its
// copies must not be refused (they were, when the copies' tolerance was reset to bound);
// an exact golden's copies must not be refused for lacking inline inputs.
TEST(PaddingCheck, CopiesOfTheCaseKeepWhatMadeItValid) {
  auto oracle = make_reference_backend();
  Case c = with_fill(test::conv_case({.batch = 1, .channels = 1, .out_channels = 1, .spatial = {16, 16},
                                      .kernel = {3, 3}, .padding = explicit_pad({{1, 1}, {1, 1}}),
                                      .dtype = DType::kBF16}),
                     Fill::kRandom);
  c.accumulation = DType::kBF16;
  c.tolerance = Tolerance{ToleranceKind::kExplicit, 0.5, 0.5};
  ASSERT_TRUE(validate(c).ok()) << validate(c).to_string();
  for (const char* check : {"padding", "weight_share"}) {
    const CheckResult r = run_check(c, *oracle, check);
    EXPECT_NE(r.disposition, Disposition::kFailed) << check << ": " << r.message;
    EXPECT_EQ(r.message.find("invalid_argument"), std::string::npos) << check << ": " << r.message;
  }
}

TEST(PaddingCheck, CatchesReflectThatRepeatsTheEdge) {
  const Case c = with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {7, 6}, .kernel = {3, 3},
                                            .padding = explicit_pad({{1, 1}, {2, 2}}), .mode = PaddingMode::kReflect}),
                           Fill::kRandom);
  ReflectRepeatsEdge be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y differs from the same op on the input padded explicitly (reflect padding [[1, 1], [2, 2]]");
  EXPECT_MESSAGE_HAS(r, "all in windows that overlap the padding: reflect mirrors about the edge element without repeating it");
  Case zeros = c;
  std::get<ConvParams>(zeros.op).padding_mode = PaddingMode::kZeros;  // the bug only touches reflect
  EXPECT_DISPOSITION(run_check(zeros, be, "padding"), Disposition::kPassed);
}

// SAME with an even kernel pads one more on the high side; a kernel that puts it on the
// low side (SAME_LOWER) computes the op with every dim's pads reversed.
TEST(PaddingCheck, NamesPadsOnTheWrongSide) {
  const Case c = with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {8, 8}, .kernel = {4, 4},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  RepadsConv be("wrong-side", [](SpatialGeometry& g) {
    for (DimGeometry& d : g.dims) std::swap(d.pad_lo, d.pad_hi);
  });
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y is the op with pads on the wrong side (each dim's [lo, hi] applied as [hi, lo]): "
                        "zeros padding [[2, 1], [2, 1]]");
}

// Pads given as (w, h) to an (h, w) API. H [0, 2] and W [1, 1] have the same totals,
// so the outputs keep their extents and only the values tell.
TEST(PaddingCheck, NamesHAndWPaddingSwapped) {
  const Case c = with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {7, 6}, .kernel = {3, 3},
                                            .padding = explicit_pad({{0, 2}, {1, 1}})}),
                           Fill::kRandom);
  RepadsConv be("hw-swapped", [](SpatialGeometry& g) {
    std::swap(g.dims[0].pad_lo, g.dims[1].pad_lo);
    std::swap(g.dims[0].pad_hi, g.dims[1].pad_hi);
  });
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y is the op with H and W padding swapped (the pads of the last two dims exchanged): "
                        "zeros padding [[1, 1], [0, 2]]");
  const std::string m = r.message;
  EXPECT_EQ(m.find("wrong side"), std::string::npos) << m;
}

TEST(PaddingCheck, NamesTheBorderLeftByValidWhereSameWasAsked) {
  const Case c = with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {8, 8}, .kernel = {3, 3},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  ValidForSame be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "border outputs not written: ");
  EXPECT_MESSAGE_HAS(r, "y rows 0 and 7 and columns 0 and 7 (the border)");
}

TEST(PaddingCheck, NamesAnUnwrittenBorderColumn) {
  const Case c = with_fill(test::conv_case({.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  SkipsLastColumn be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "border outputs not written: 12 outputs at y column 7 (the border)");
}

// A NaN the backend wrote (a stale buffer, say), not the poison: wrong, not "not written".
class WritesNaNInLastColumn final : public DelegatingBackend {
 public:
  WritesNaNInLastColumn() : DelegatingBackend("writes-nan-in-last-column") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    const int64_t wo = g.spatial.dims.back().out;
    for (int64_t i = wo - 1; i < y.size(); i += wo) y[i] = std::nan("");
    return ok_status();
  }
};

TEST(PaddingCheck, AWrittenNaNIsAWrongOutputNotAnUnwrittenOne) {
  const Case c = with_fill(test::conv_case({.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  WritesNaNInLastColumn be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "wrong border outputs: 12 outputs at y column 7 (the border) are NaN or 0 on ");
  EXPECT_MESSAGE_HAS(r, "(0 of them still the poison, never written;");
  EXPECT_EQ(r.message.find("not written:"), std::string::npos) << r.message;
}

TEST(PaddingCheck, NamesDroppedBorderRowsOfDx) {
  const Case c = with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {8, 6}, .kernel = {3, 3},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  DropsBorderRowsOfDx be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "input rows 0 and 7 (the border) receive no gradient: dropped border");
}

TEST(PaddingCheck, CatchesMaxPoolPaddingReadAsZero) {
  Case c = pool_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 1}, {1, 1}}});
  Tensor x = inputs_of(c).x;
  for (double& v : x.data) v = -1.0 - std::abs(v);
  c.tensors["x"] = x;
  PoolPadsZero be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "(-inf padding [[1, 1], [1, 1]], then valid)");
  EXPECT_MESSAGE_HAS(r, "padded positions are -inf and never selected");
}

// ---- determinism -----------------------------------------------------------------------

TEST(DeterminismCheck, PassThroughIsBitwiseRepeatable) {
  PassThrough pass;
  std::vector<Case> cases = good_conv_cases();
  for (const Case& c : good_pool_cases()) cases.push_back(c);
  for (Case c : cases) {
    SCOPED_TRACE(case_to_one_line(c));
    c.deterministic = true;
    const CheckResult r = run_check(c, pass, "determinism");
    EXPECT_DISPOSITION(r, Disposition::kPassed);
    EXPECT_MESSAGE_HAS(r, "4 runs bitwise equal");
  }
}

// A forward that memoizes y by its input buffers' addresses: an allocator that hands the
// same address to new data gets the old y back.
class CachesByAddress final : public DelegatingBackend {
 public:
  CachesByAddress() : DelegatingBackend("caches-by-address") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (x.data.data() == last_x_ && w.data.data() == last_w_ && y.size() == static_cast<int64_t>(last_y_.size())) {
      std::copy(last_y_.begin(), last_y_.end(), y.data.begin());
      return ok_status();
    }
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    last_x_ = x.data.data();
    last_w_ = w.data.data();
    last_y_.assign(y.data.begin(), y.data.end());
    return ok_status();
  }

 private:
  const double* last_x_ = nullptr;
  const double* last_w_ = nullptr;
  std::vector<double> last_y_;
};

TEST(DeterminismCheck, CatchesOutputsCachedByBufferAddress) {
  CachesByAddress be;
  const CheckResult r = run_check(good_conv_cases()[0], be, "determinism");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "outputs on input buffers refilled in place with new values differ from the outputs on the "
                        "same values in fresh buffers (y differs");
  EXPECT_MESSAGE_HAS(r, "and equal bitwise to the outputs for the old values: the backend returns something kept by "
                        "its buffers' addresses");
  PassThrough pass;
  const CheckResult ok = run_check(good_conv_cases()[0], pass, "determinism");
  EXPECT_DISPOSITION(ok, Disposition::kPassed);
  EXPECT_MESSAGE_HAS(ok, "input buffers refilled in place with new values gave no outputs of the old ones");
}

// Rounding noise that starts after the repeated runs (an atomic order that changes only
// later) makes the refilled run differ from the fresh one, but not equal to the old
// values' outputs: not taken for a cache.
class NoisyFromTheSixthCall final : public DelegatingBackend {
 public:
  NoisyFromTheSixthCall() : DelegatingBackend("noisy-from-the-sixth-call") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    if (++calls_ >= 6 && calls_ % 2 == 0) {
      for (double& v : y.data) v = std::nextafter(v, INFINITY);
    }
    return ok_status();
  }

 private:
  int calls_ = 0;
};

TEST(DeterminismCheck, LateRoundingNoiseIsNotTakenForACache) {
  NoisyFromTheSixthCall be;
  Case c = good_conv_cases()[0];
  c.deterministic = true;
  const CheckResult r = run_check(c, be, "determinism");
  EXPECT_DISPOSITION(r, Disposition::kPassed);
  EXPECT_EQ(r.message.find("addresses"), std::string::npos) << r.message;
}

TEST(DeterminismCheck, IsSkippedOnTheOracle) {
  auto oracle = make_reference_backend();
  EXPECT_DISPOSITION(run_check(good_conv_cases()[0], *oracle, "determinism"), Disposition::kSkipped);
}

TEST(DeterminismCheck, FailsARaceWhenTheCaseRequiresDeterminism) {
  Case c = good_conv_cases()[1];
  c.deterministic = true;
  RacyWeightGradient be;
  const CheckResult r = run_check(c, be, "determinism");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "nondeterministic: dw differs between run 1 and run 2 at 3 elements, max |diff| ");
  EXPECT_GT(r.max_abs_error, 0.0);
}

TEST(DeterminismCheck, ReportsARaceAsPassedWhenNotRequired) {
  Case c = good_conv_cases()[1];
  c.deterministic = false;
  RacyWeightGradient be;
  const CheckResult r = run_check(c, be, "determinism");
  EXPECT_DISPOSITION(r, Disposition::kPassed);
  EXPECT_MESSAGE_HAS(r, "nondeterministic");
  EXPECT_MESSAGE_HAS(r, "dw differs between run 1 and run 2");
}

// ---- integrity -------------------------------------------------------------------------

TEST(IntegrityCheck, PassThroughWritesEverythingAndKeepsItsInputs) {
  PassThrough pass;
  std::vector<Case> cases = good_conv_cases();
  for (const Case& c : good_pool_cases()) cases.push_back(c);
  for (const Case& c : cases) {
    SCOPED_TRACE(case_to_one_line(c));
    EXPECT_DISPOSITION(run_check(c, pass, "integrity"), Disposition::kPassed);
  }
  auto oracle = make_reference_backend();
  EXPECT_DISPOSITION(run_check(cases[0], *oracle, "integrity"), Disposition::kSkipped);
}

TEST(IntegrityCheck, NamesTheBorderLeftByValidWhereSameWasAsked) {
  const Case c = with_fill(test::conv_case({.channels = 2, .out_channels = 2, .spatial = {8, 8}, .kernel = {3, 3},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  ValidForSame be;
  const CheckResult r = run_check(c, be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y: 56 of 128 elements never written");
  EXPECT_MESSAGE_HAS(r, "border outputs not written: y rows 0 and 7 and columns 0 and 7 (the border)");
}

TEST(IntegrityCheck, NamesAnUnwrittenBorderColumn) {
  const Case c = with_fill(test::conv_case({.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3},
                                            .padding = pad_kind(PadKind::kSame)}),
                           Fill::kRandom);
  SkipsLastColumn be;
  const CheckResult r = run_check(c, be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y: 12 of 96 elements never written");
  EXPECT_MESSAGE_HAS(r, "y column 7 (the border)");
}

// The poison survives the tensors' rounding to every dtype: an element left unwritten
// is named in f32, f16 and bf16 as in f64.
TEST(IntegrityCheck, NamesUnwrittenElementsInEveryDtype) {
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    EXPECT_TRUE(is_poison(round_to(d, poison_value())));
    EXPECT_TRUE(is_poison(poisoned(d, {2})[1]));
    const Case c = with_fill(test::conv_case({.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3},
                                              .padding = pad_kind(PadKind::kSame), .dtype = d}),
                             Fill::kRandom);
    SkipsLastColumn be;
    const CheckResult r = run_check(c, be, "integrity");
    EXPECT_DISPOSITION(r, Disposition::kFailed);
    EXPECT_MESSAGE_HAS(r, "y: 12 of 96 elements never written");
  }
}

TEST(IntegrityCheck, CatchesABackendThatWritesIntoItsInput) {
  WritesIntoInput be;
  const CheckResult r = run_check(good_conv_cases()[1], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "the backend wrote into its input x during the checked run: 1 of");
  EXPECT_MESSAGE_HAS(r, "first at (0, 0, 0, 1)");
}

TEST(IntegrityCheck, CatchesPoisonIndicesLeftInTrainingMode) {
  PoolKeepsNoIndices be;
  const CheckResult r = run_check(good_pool_cases()[1], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "indices: 252 of 252 never written (still the poison value)");
}

TEST(IntegrityCheck, CatchesAResizedOutputBuffer) {
  ResizesOutput be;
  const CheckResult r = run_check(good_conv_cases()[0], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "never resizes or reshapes it");
}

// Guard bands (host_buffer.h): writes outside a buffer are named with the buffer, the
// side and the offset, while the values in the buffer are all right.
TEST(IntegrityCheck, CatchesAWritePastTheEndOfAnOutput) {
  WritesPastTheEnd be;
  const CheckResult r = run_check(good_conv_cases()[0], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y: the guard band around the buffer was overwritten");
  EXPECT_MESSAGE_HAS(r, "after the last element changed, the first of them right after it (where element 33 would be, counting from 0); the backend wrote outside the 33 elements");
  EXPECT_DISPOSITION(run_check(good_conv_cases()[0], be, "forward"), Disposition::kPassed);
}

TEST(IntegrityCheck, CatchesAWriteBeforeTheStartOfAnOutput) {
  PoolWritesBeforeStart be;
  const CheckResult r = run_check(good_pool_cases()[1], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "dx: the guard band around the buffer was overwritten: 8 bytes before the first element "
                        "changed, the nearest 1 byte before it");
}

TEST(IntegrityCheck, CatchesAnOutputBufferReplacedByAnother) {
  ReplacesOutputBuffer be;
  const CheckResult r = run_check(good_conv_cases()[0], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y: the backend replaced the buffer it was given with another one");
  EXPECT_DISPOSITION(run_check(good_conv_cases()[0], be, "forward"), Disposition::kPassed);
}

TEST(IntegrityCheck, CatchesAnOverrunInTheSecondRunOnly) {
  OverrunsOnTheSecondCall be;
  const CheckResult r = run_check(good_conv_cases()[0], be, "integrity");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "y (in a second run on a copy): the guard band around the buffer was overwritten");
  EXPECT_MESSAGE_HAS(r, "the first of them 8 bytes past the end (where element 34 would be, counting from 0)");
}
