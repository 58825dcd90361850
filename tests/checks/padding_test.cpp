// The padding check (docs/checks.md): the oracle and a pass-through backend pass on
// every padding mode; each planted bug is caught with the diagnosis that names it. Every
// data-dependent test first asserts that its data can show the bug.
#include <gtest/gtest.h>

#include "core/validate.h"
#include "rules_support.h"

using namespace kc;
using namespace kc::rules_test;

TEST(PaddingCheck, OracleAndPassThroughPassOnConvModesAndPools) {
  auto oracle = make_reference_backend();
  PassThrough pass;
  const std::vector<Case> cases = good_cases();
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
  Case c = with_fill(test::conv_case({.batch = 1,
                                      .channels = 1,
                                      .out_channels = 1,
                                      .spatial = {16, 16},
                                      .kernel = {3, 3},
                                      .padding = explicit_pad({{1, 1}, {1, 1}}),
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
  const Case c = with_fill(test::conv_case({.channels = 2,
                                            .out_channels = 2,
                                            .spatial = {7, 6},
                                            .kernel = {3, 3},
                                            .padding = explicit_pad({{1, 1}, {2, 2}}),
                                            .mode = PaddingMode::kReflect}),
                           Fill::kRandom);
  ReflectRepeatsEdge be;
  expect_check(
      c, be, "padding", Disposition::kFailed,
      {"y differs from the same op on the input padded explicitly (reflect padding [[1, 1], [2, 2]]",
       "all in windows that overlap the padding: reflect mirrors about the edge element without repeating it"});
  Case zeros = c;
  std::get<ConvParams>(zeros.op).padding_mode = PaddingMode::kZeros;  // the bug only touches reflect
  EXPECT_DISPOSITION(run_check(zeros, be, "padding"), Disposition::kPassed);
}

// SAME with an even kernel pads one more on the high side; a kernel that puts it on the
// low side (SAME_LOWER) computes the op with every dim's pads reversed.
TEST(PaddingCheck, NamesPadsOnTheWrongSide) {
  const Case c = with_fill(
      test::conv_case(
          {.channels = 2, .out_channels = 2, .spatial = {8, 8}, .kernel = {4, 4}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  RepadsConv be("wrong-side", [](SpatialGeometry& g) {
    for (DimGeometry& d : g.dims) std::swap(d.pad_lo, d.pad_hi);
  });
  expect_check(c, be, "padding", Disposition::kFailed,
               {"y is the op with pads on the wrong side (each dim's [lo, hi] applied as [hi, lo]): zeros padding [[2, "
                "1], [2, 1]]"});
}

// Pads given as (w, h) to an (h, w) API. H [0, 2] and W [1, 1] have the same totals,
// so the outputs keep their extents and only the values tell.
TEST(PaddingCheck, NamesHAndWPaddingSwapped) {
  const Case c = with_fill(test::conv_case({.channels = 2,
                                            .out_channels = 2,
                                            .spatial = {7, 6},
                                            .kernel = {3, 3},
                                            .padding = explicit_pad({{0, 2}, {1, 1}})}),
                           Fill::kRandom);
  RepadsConv be("hw-swapped", [](SpatialGeometry& g) {
    std::swap(g.dims[0].pad_lo, g.dims[1].pad_lo);
    std::swap(g.dims[0].pad_hi, g.dims[1].pad_hi);
  });
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r,
                     "y is the op with H and W padding swapped (the pads of the last two dims exchanged): "
                     "zeros padding [[1, 1], [0, 2]]");
  const std::string m = r.message;
  EXPECT_EQ(m.find("wrong side"), std::string::npos) << m;
}

TEST(PaddingCheck, NamesTheBorderLeftByValidWhereSameWasAsked) {
  const Case c = with_fill(
      test::conv_case(
          {.channels = 2, .out_channels = 2, .spatial = {8, 8}, .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  ValidForSame be;
  expect_check(c, be, "padding", Disposition::kFailed,
               {"border outputs not written: ", "y rows 0 and 7 and columns 0 and 7 (the border)"});
}

TEST(PaddingCheck, NamesAnUnwrittenBorderColumn) {
  const Case c = with_fill(
      test::conv_case(
          {.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  SkipsLastColumn be;
  expect_check(c, be, "padding", Disposition::kFailed,
               {"border outputs not written: 12 outputs at y column 7 (the border)"});
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
  const Case c = with_fill(
      test::conv_case(
          {.channels = 1, .out_channels = 2, .spatial = {6, 8}, .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  WritesNaNInLastColumn be;
  const CheckResult r = run_check(c, be, "padding");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "wrong border outputs: 12 outputs at y column 7 (the border) are NaN or 0 on ");
  EXPECT_MESSAGE_HAS(r, "(0 of them still the poison, never written;");
  EXPECT_EQ(r.message.find("not written:"), std::string::npos) << r.message;
}

TEST(PaddingCheck, NamesDroppedBorderRowsOfDx) {
  const Case c = with_fill(
      test::conv_case(
          {.channels = 2, .out_channels = 2, .spatial = {8, 6}, .kernel = {3, 3}, .padding = pad_kind(PadKind::kSame)}),
      Fill::kRandom);
  DropsBorderRowsOfDx be;
  expect_check(c, be, "padding", Disposition::kFailed,
               {"input rows 0 and 7 (the border) receive no gradient: dropped border"});
}

TEST(PaddingCheck, CatchesMaxPoolPaddingReadAsZero) {
  Case c = pool_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 1}, {1, 1}}});
  Tensor x = inputs_of(c).x;
  for (double& v : x.data) v = -1.0 - std::abs(v);
  c.tensors["x"] = x;
  PoolPadsZero be;
  expect_check(c, be, "padding", Disposition::kFailed,
               {"(-inf padding [[1, 1], [1, 1]], then valid)", "padded positions are -inf and never selected"});
}
