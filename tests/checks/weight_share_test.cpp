// The weight_share check (docs/checks.md, "Notes on individual checks"): planted backward bugs are caught and
// classified (mean instead of sum, single position, partial sum, nondeterministic race);
// data that cannot tell a partial sum from the whole is MISTRUSTED.
#include <gtest/gtest.h>

#include "judge/absolute_pass.h"
#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;

Case share_case() {
  return seeded(conv_case({.batch = 3,
                           .channels = 2,
                           .out_channels = 3,
                           .spatial = {6, 5},
                           .kernel = {3, 3},
                           .padding = pad_kind(PadKind::kSame),
                           .bias = true}),
                31);
}

TEST(WeightShareCheck, ReferenceAndLowPrecisionBackendPass) {
  std::vector<Case> cases = conv_cases();
  cases.push_back(fused(share_case()));
  Case integer = share_case();
  integer.data.fill = Fill::kInteger;
  integer.tolerance.kind = ToleranceKind::kExact;
  cases.push_back(integer);
  auto oracle = make_reference_backend();
  RoundingBackend rounding;
  for (Case c : cases) {
    const CheckResult r = run_check(c, *oracle, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("tile split"));
    if (c.data.fill != Fill::kInteger) c.dtype = DType::kF16;
    const CheckResult low = run_check(c, rounding, "weight_share");
    EXPECT_EQ(low.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(low);
  }
}

TEST(WeightShareCheck, MeanInsteadOfSum) {
  PlantedBackward be(
      [](const ConvGeometry& g, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor* db) {
        const double count = static_cast<double>(g.batch * g.spatial.out_count());
        for (double& v : dw.data) v /= count;
        for (double& v : db->data) v /= count;
      });
  for (const Case& c : {share_case(), fused(share_case())}) {
    const CheckResult r = run_check(c, be, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
    EXPECT_THAT(r.message, HasSubstr("mean instead of sum (dw = the oracle's / 90 = N*P)"));
    EXPECT_THAT(r.message, HasSubstr("batch split (sum of 3 batch-1 runs) breaks"));
  }
}

TEST(WeightShareCheck, SinglePositionLastWriteWins) {
  PlantedBackward be(
      [](const ConvGeometry& g, const Tensor& x, const Tensor&, const Tensor& dy, Tensor&, Tensor& dw, Tensor*) {
        const int64_t N = g.batch, P = g.spatial.out_count();
        dw.data = ref::conv_backward_weight(
                      g, x, keep_only(g, dy, [&](int64_t n, int64_t p) { return n == N - 1 && p == P - 1; }))
                      .data;
      });
  const CheckResult r = run_check(share_case(), be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("single position (last write wins) (dw = the last output position"));
  EXPECT_THAT(r.message, HasSubstr("batch split (sum of 3 batch-1 runs) breaks"));
}

// A backward that steps w in place (an optimizer fused into it): the runs weight_share
// compares read other weights (through relu's mask: a plain conv's dw does not read w),
// which is named first, never a race.
TEST(WeightShareCheck, AnInputWrittenIsNamedBeforeARace) {
  PlantedBackward be(
      [](const ConvGeometry&, const Tensor&, const Tensor& w, const Tensor&, Tensor&, Tensor& dw, Tensor*) {
        Tensor& wrong = const_cast<Tensor&>(w);
        for (int64_t i = 0; i < w.size(); ++i) wrong[i] -= 0.25 * dw[i];
      });
  const CheckResult r = run_check(fused(share_case()), be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("the backend wrote into its input w in conv_backward"));
  EXPECT_THAT(r.message, Not(HasSubstr("race")));
}

// Two output positions: half the sum is one position's share and a rounding slip alike.
TEST(WeightShareCheck, TwoPositionsAreTooSmallToClassify) {
  Case c = seeded(conv_case({.batch = 1, .channels = 2, .out_channels = 2, .spatial = {3}, .kernel = {2}}), 7);
  PlantedBackward half(
      [](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor*) {
        for (double& v : dw.data) v *= 0.5;
      });
  const CheckResult r = run_check(c, half, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("too small to classify"));
  EXPECT_THAT(r.message, Not(HasSubstr("last write wins")));
}

TEST(WeightShareCheck, PartialSumWithoutTheBatch) {
  PlantedBackward be(
      [](const ConvGeometry& g, const Tensor& x, const Tensor&, const Tensor& dy, Tensor&, Tensor& dw, Tensor*) {
        dw.data = ref::conv_backward_weight(g, x, keep_only(g, dy, [](int64_t n, int64_t) { return n == 0; })).data;
      });
  const CheckResult r = run_check(share_case(), be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("partial sum (dw = sample 0 alone"));
  EXPECT_THAT(r.message, HasSubstr("batch split (sum of 3 batch-1 runs) breaks"));
  EXPECT_THAT(r.message, ::testing::Not(HasSubstr("tile split")));  // tiles of a batch-0-only sum still add up
}

// A dy that is 0 on samples 1 and 2 (as a relu that zeroes whole samples leaves it):
// a dw of sample 0 alone is right on this data, so a pass cannot be trusted against the
// missing batch sum. Found by fuzzing trap.dw_no_batch_sum on a conv_bias_relu case.
TEST(WeightShareCheck, DataThatCannotTellAPartialSumIsMistrusted) {
  Case c = share_case();
  const ConvGeometry g = *conv_geometry(c);
  Tensor dy = make_inputs(c)->dy;
  const int64_t per = dy.size() / g.batch;
  for (int64_t i = per; i < dy.size(); ++i) dy[i] = 0.0;
  c.tensors["dy"] = dy;
  PlantedBackward partial(
      [](const ConvGeometry& g, const Tensor& x, const Tensor&, const Tensor& dy, Tensor&, Tensor& dw, Tensor*) {
        dw.data = ref::conv_backward_weight(g, x, keep_only(g, dy, [](int64_t n, int64_t) { return n == 0; })).data;
      });
  auto oracle = make_reference_backend();
  for (Backend* be : {static_cast<Backend*>(&partial), static_cast<Backend*>(oracle.get())}) {
    const CheckResult r = run_check(c, *be, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kMistrusted) << be->name() << ": " << describe(r);
    EXPECT_THAT(r.message, HasSubstr("the data cannot tell the right sum from this mistake: dw = sample 0 alone: "
                                     "the sum over the batch is missing (partial sum)"))
        << be->name();
  }
  // With dy nonzero in every sample the same backward fails (PartialSumWithoutTheBatch).
}

// bf16, dy of sample 0 all 0.25 (k + 1) in channel k and of samples 1 and 2 only 1 and
// -1 + 2^-7 per channel: db of sample 0 alone is off by 2^-6, inside db's bound (about
// 2^-8 of 7.5 (k + 1)), though not
// 0. A kernel that leaves the batch out of db passes every identity on this data, so a
// pass is MISTRUSTED; the same kernel fails where the other samples' db is large.
TEST(WeightShareCheck, APartialSumWithinTheToleranceIsMistrusted) {
  Case c = share_case();
  c.dtype = DType::kBF16;
  const ConvGeometry g = *conv_geometry(c);
  const int64_t P = g.spatial.out_count(), per = g.out_channels * P;
  Tensor dy = make_inputs(c)->dy;
  for (int64_t i = 0; i < dy.size(); ++i) {
    const int64_t p = i % P;
    dy[i] = i < per ? 0.25 * static_cast<double>(1 + i / P) : p == 0 ? 1.0 : p == 1 ? -1.0 + 0x1p-7 : 0.0;
  }
  c.tensors["dy"] = dy;
  PlantedBackward db_of_sample_0(
      [](const ConvGeometry& g, const Tensor&, const Tensor&, const Tensor& dy, Tensor&, Tensor&, Tensor* db) {
        db->data = ref::conv_backward_bias(g, keep_only(g, dy, [](int64_t n, int64_t) { return n == 0; })).data;
      });
  auto oracle = make_reference_backend();
  for (Backend* be : {static_cast<Backend*>(&db_of_sample_0), static_cast<Backend*>(oracle.get())}) {
    const CheckResult r = run_check(c, *be, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kMistrusted) << be->name() << ": " << describe(r);
    EXPECT_THAT(r.message, HasSubstr("db = sample 0 alone: the sum over the batch is missing (partial sum) is within "
                                     "the tolerance of the right db here"))
        << be->name();
  }
  Case wide = share_case();
  wide.dtype = DType::kBF16;
  const CheckResult r = run_check(wide, db_of_sample_0, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("partial sum (db = sample 0 alone"));
}

// Ten outputs of which only the first four read input (the other six windows read only
// the right padding): halving at 5 would leave one tile of padding alone, whose dw is 0
// on any data. The tiles are cut at 3, between outputs that read input.
Case padded_tail_case() {
  return seeded(conv_case({.batch = 1,
                           .channels = 2,
                           .out_channels = 2,
                           .spatial = {4},
                           .kernel = {1},
                           .padding = explicit_pad({{0, 6}}),
                           .bias = true}),
                47);
}

Tensor first_outputs(const ConvGeometry& g, const Tensor& dy, int64_t count) {
  return keep_only(g, dy, [count](int64_t, int64_t p) { return p < count; });
}

TEST(WeightShareCheck, TheTilesAreCutBetweenOutputsThatReadInput) {
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(padded_tail_case(), *oracle, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("tile split (spatial dim 0 at 3 of 10 outputs)"));
  // A kernel that sums the first tile alone is named so (at a cut of 5 its dw is right).
  PlantedBackward first_tile(
      [](const ConvGeometry& g, const Tensor& x, const Tensor&, const Tensor& dy, Tensor&, Tensor& dw, Tensor* db) {
        dw.data = ref::conv_backward_weight(g, x, first_outputs(g, dy, 3)).data;
        db->data = ref::conv_backward_bias(g, first_outputs(g, dy, 3)).data;
      });
  const CheckResult bad = run_check(padded_tail_case(), first_tile, "weight_share");
  EXPECT_EQ(bad.disposition, Disposition::kFailed) << describe(bad);
  EXPECT_THAT(bad.message, HasSubstr("partial sum (dw = the first output tile alone)"));
}

// The cut follows what each window reads: dilation 3 past 8 leading zeros (outputs 5 to 7
// of 8 read input: cut at 6, not 4), stride 3 into trailing padding (outputs 0 and 1 of 5:
// cut at 1), and replicate padding, whose copies read input everywhere (the middle, 5).
TEST(WeightShareCheck, TheCutFollowsDilationStrideAndPaddingCopies) {
  auto oracle = make_reference_backend();
  const std::pair<test::ConvSpec, const char*> geometries[] = {{{.channels = 2,
                                                                 .out_channels = 2,
                                                                 .spatial = {3},
                                                                 .kernel = {2},
                                                                 .dilation = {3},
                                                                 .padding = explicit_pad({{8, 0}}),
                                                                 .bias = true},
                                                                "at 6 of 8 outputs"},
                                                               {{.channels = 2,
                                                                 .out_channels = 2,
                                                                 .spatial = {6},
                                                                 .kernel = {1},
                                                                 .stride = {3},
                                                                 .padding = explicit_pad({{0, 9}}),
                                                                 .bias = true},
                                                                "at 1 of 5 outputs"},
                                                               {{.channels = 2,
                                                                 .out_channels = 2,
                                                                 .spatial = {4},
                                                                 .kernel = {1},
                                                                 .padding = explicit_pad({{0, 6}}),
                                                                 .mode = PaddingMode::kReplicate,
                                                                 .bias = true},
                                                                "at 5 of 10 outputs"}};
  for (const auto& [spec, cut] : geometries) {
    const Case c = seeded(conv_case(spec), 53);
    const CheckResult r = run_check(c, *oracle, "weight_share");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr(std::string("tile split (spatial dim 0 ") + cut + ")")) << case_to_one_line(c);
  }
}

// Four outputs of which only output 0 reads input: no cut leaves a reading output on both
// sides, so the tiles are halved. A partial sum that leaves out only outputs of zero
// padding is right for dw on any data, so it does not make a pass MISTRUSTED; a db over
// the first tile alone is still named.
TEST(WeightShareCheck, PartsOfZeroPaddingAloneAreJudgedOnDbOnly) {
  const Case c = seeded(conv_case({.channels = 2,
                                   .out_channels = 2,
                                   .spatial = {1},
                                   .kernel = {1},
                                   .padding = explicit_pad({{0, 3}}),
                                   .bias = true}),
                        5);
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("tile split (spatial dim 0 at 2 of 4 outputs)"));
  PlantedBackward first_tile_db(
      [](const ConvGeometry& g, const Tensor&, const Tensor&, const Tensor& dy, Tensor&, Tensor&, Tensor* db) {
        db->data = ref::conv_backward_bias(g, first_outputs(g, dy, 2)).data;
      });
  const CheckResult bad = run_check(c, first_tile_db, "weight_share");
  EXPECT_EQ(bad.disposition, Disposition::kFailed) << describe(bad);
  EXPECT_THAT(bad.message, HasSubstr("partial sum (db = the first output tile alone)"));
}

// dy that is 0 on the second tile's outputs that read input: a kernel that sums the
// first tile alone is right on this data, so a pass is MISTRUSTED.
TEST(WeightShareCheck, DataThatCannotTellATileFromTheSumIsMistrusted) {
  Case c = padded_tail_case();
  Tensor dy = make_inputs(c)->dy;  // [1, 2, 10]: output 3 of each channel is the tile's only read
  for (int64_t i = 0; i < dy.size(); ++i) dy[i] = i % 10 == 3 ? 0.0 : dy[i];
  c.tensors["dy"] = dy;
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("dw = the first output tile alone (partial sum) gives exactly the right dw"));
}

TEST(WeightShareCheck, NondeterministicRace) {
  // Each call nudges a random third of dw by one ulp: order-dependent accumulation.
  std::mt19937_64 rng(41);
  PlantedBackward be(
      [&rng](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor*) {
        for (double& v : dw.data) {
          if (rng() % 3 == 0) v = std::nextafter(v, rng() % 2 ? INFINITY : -INFINITY);
        }
      });
  Case c = share_case();
  c.deterministic = true;
  const CheckResult r = run_check(c, be, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("nondeterministic race (a second run gives a different dw"));
  c.deterministic = false;  // within the tolerance and not asked for: reported, not failed
  const CheckResult lax = run_check(c, be, "weight_share");
  EXPECT_EQ(lax.disposition, Disposition::kPassed) << describe(lax);
  EXPECT_THAT(lax.message, HasSubstr("a second run gives a different dw"));
}

// conv_bias_relu whose pre-activation at output 0 is 0.5 - 0.5 + 0.75 * 2^-1074: 0 in
// f64, whose additions absorb the subnormal product, but 2^-1074 > 0 for a kernel that
// fuses the last multiply-add (as the fuzzer found, seed 7 case 854). Such a kernel
// passes dy through the relu there, rightly: weight_share allows either side, as
// backward does. Sample 1 (z = 1.25, 2.25, 3.25, dy 2 each) keeps dw and db clear of the
// ambiguity: every partial sum leaves out more than output 0's dy of 1, the slack the
// ambiguity allows (with dy 1 there, a sum over the second and third outputs alone would
// lie within it, and the pass be MISTRUSTED). A dw taken as the mean still fails.
TEST(WeightShareCheck, AReluInputWithinRoundingOfZeroMayTakeEitherSide) {
  Case c = fused(conv_case({.batch = 2, .channels = 2, .out_channels = 1, .spatial = {3}, .kernel = {1}}));
  const double tiny = std::ldexp(1.0, -1074);
  c.tensors["x"] = Tensor{DType::kF64, {2, 2, 3}, {0.5, 1.0, -1.0, tiny, 2.0, 1.0, 1.0, 2.0, 3.0, 1.0, 1.0, 1.0}};
  c.tensors["w"] = Tensor{DType::kF64, {1, 2, 1}, {1.0, 0.75}};
  c.tensors["b"] = Tensor{DType::kF64, {1}, {-0.5}};
  c.tensors["dy"] = Tensor{DType::kF64, {2, 1, 3}, {1.0, 2.0, 3.0, 2.0, 2.0, 2.0}};
  // relu'(z) taken at z >= 0: output 0 passes its dy (the other two are clear of 0).
  PlantedBackward zero_passes(
      [](const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor&, Tensor& dw, Tensor* db) {
        const Tensor bias{DType::kF64, {1}, {-0.5}};
        const Tensor z = ref::conv_forward(g, x, w, &bias);  // exactly 0 in f64 at output 0
        Tensor routed = dy;
        for (int64_t i = 0; i < routed.size(); ++i) routed[i] = z[i] >= 0.0 ? dy[i] : 0.0;
        dw.data = ref::conv_backward_weight(g, x, routed).data;
        db->data = ref::conv_backward_bias(g, routed).data;
      });
  const CheckResult r = run_check(c, zero_passes, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("1 pre-activations within rounding of 0 may take either side of relu'"));
  PlantedBackward mean(
      [](const ConvGeometry& g, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor* db) {
        const double count = static_cast<double>(g.batch * g.spatial.out_count());
        for (double& v : dw.data) v /= count;
        for (double& v : db->data) v /= count;
      });
  EXPECT_EQ(run_check(c, mean, "weight_share").disposition, Disposition::kFailed);
}

// 24 of 32 pre-activations are 2^-52 from 0 (x = 1 + 2^-52, w = 1, b = -1): either side
// of relu' is right there, and their dy may move dw and db by more than half their size,
// though dx is clear at the other 8. weight_share judges dw and db alone, so it cannot
// pass a dw taken as the mean on such data: MISTRUSTED, never PASSED.
TEST(WeightShareCheck, AmbiguityThatSwampsDwAndDbIsMistrustedEvenWhereDxIsClear) {
  const int64_t P = 16;
  Case c = fused(conv_case({.batch = 2, .channels = 1, .out_channels = 1, .spatial = {P}, .kernel = {1}}));
  const double e = std::ldexp(1.0, -52);
  Tensor x = Tensor::zeros(DType::kF64, {2, 1, P}), dy = x;
  for (int64_t i = 0; i < 2 * P; ++i) {
    const int64_t o = i % P;
    x[i] = o < 4 ? 2.0 + static_cast<double>(o) : 1.0 + e;
    dy[i] = o < 4 ? (o % 2 ? -1.0 : 1.5) : 1.0;
  }
  c.tensors["x"] = x;
  c.tensors["w"] = Tensor{DType::kF64, {1, 1, 1}, {1.0}};
  c.tensors["b"] = Tensor{DType::kF64, {1}, {-1.0}};
  c.tensors["dy"] = dy;
  PlantedBackward mean(
      [](const ConvGeometry& g, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor* db) {
        const double count = static_cast<double>(g.batch * g.spatial.out_count());
        for (double& v : dw.data) v /= count;
        for (double& v : db->data) v /= count;
      });
  const CheckResult r = run_check(c, mean, "weight_share");
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("within rounding of 0, where either side of relu' is right"));
}

// Two of 16 outputs per sample have z = 2^-32, within rounding of 0 (x0 = 2^20 + 2^-32,
// w = {1, 0, 0, 0, 0}, b = -2^20); their x in channels 1 to 4 is 1000, elsewhere 1. So
// db and dw[0] are clear of the ambiguity, but it may move dw[1..4] (28 each) by 4000. A
// kernel that leaves the last input channels' dw at 0 (a skipped partial tile) passes
// every comparison within that slack: backward and weight_share are MISTRUSTED, not PASSED.
TEST(WeightShareCheck, AmbiguityThatSwampsOneGradientLeavesAPassMistrusted) {
  const int64_t P = 16, C = 5;
  Case c = fused(conv_case({.batch = 2, .channels = C, .out_channels = 1, .spatial = {P}, .kernel = {1}}));
  Tensor x = Tensor::zeros(DType::kF64, {2, C, P});
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t o = 0; o < P; ++o) {
      const bool near_zero = o < 2;
      x[(n * C) * P + o] =
          near_zero ? std::ldexp(1.0, 20) + std::ldexp(1.0, -32) : std::ldexp(1.0, 20) + 2.0 + static_cast<double>(o);
      for (int64_t ch = 1; ch < C; ++ch) x[(n * C + ch) * P + o] = near_zero ? 1000.0 : 1.0;
    }
  }
  c.tensors["x"] = x;
  c.tensors["w"] = Tensor{DType::kF64, {1, C, 1}, {1.0, 0.0, 0.0, 0.0, 0.0}};
  c.tensors["b"] = Tensor{DType::kF64, {1}, {-std::ldexp(1.0, 20)}};
  Tensor dy = Tensor::zeros(DType::kF64, {2, 1, P});
  for (double& v : dy.data) v = 1.0;
  c.tensors["dy"] = dy;
  PlantedBackward skipped_tile(
      [](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor*) {
        for (int64_t ch = 1; ch < C; ++ch) dw[ch] = 0.0;
      });
  for (const char* check : {"backward", "weight_share"}) {
    const CheckResult r = run_check(c, skipped_tile, check);
    EXPECT_EQ(r.disposition, Disposition::kMistrusted) << check << ": " << describe(r);
    EXPECT_THAT(r.message, HasSubstr("within rounding of 0, where either side of relu' is right")) << check;
    // dx is 0 with no slack in channels 1 to 4 (w is 0 there): judged exactly, not swamped.
    EXPECT_THAT(r.message, HasSubstr("all but 1 of the 5 dw elements")) << check;
  }
  // gradcheck for the case's dy alone (no Jacobian rows, which judge each output on its
  // own) is MISTRUSTED the same way; with the rows, the skipped tile fails.
  const OpGeometry geo = *op_geometry(c);
  const OpInputs in = *make_inputs(c);
  auto oracle = make_reference_backend();
  const OpOutputs ref = invoke(*oracle, c, geo, in);
  const OpOutputs abs = absolute_pass(c, geo, in, ref);
  const OpOutputs cand = invoke(skipped_tile, c, geo, in);
  const CheckContext ctx{c, geo, in, skipped_tile, false, ref, abs, cand};
  const CheckResult dy_only = checks::gradcheck_with(ctx, {.row_limit = 0});
  EXPECT_EQ(dy_only.disposition, Disposition::kMistrusted) << describe(dy_only);
  EXPECT_THAT(dy_only.message, HasSubstr("all but 1 of the 5 dw elements"));
  const CheckResult directional = checks::gradcheck_with(ctx, {.full_limit = 0});
  EXPECT_EQ(directional.disposition, Disposition::kMistrusted) << describe(directional);
  const CheckResult rows = run_check(c, skipped_tile, "gradcheck");
  EXPECT_EQ(rows.disposition, Disposition::kFailed) << describe(rows);
  // A dw[0] taken as the mean is out of the ambiguity's reach: it still fails.
  PlantedBackward mean([](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw,
                          Tensor*) { dw[0] /= 32.0; });
  for (const char* check : {"backward", "weight_share"}) {
    EXPECT_EQ(run_check(c, mean, check).disposition, Disposition::kFailed) << check;
  }
}

TEST(WeightShareCheck, NotApplicableToMaxPoolOrSpecialFills) {
  auto oracle = make_reference_backend();
  const CheckResult pool = run_check(pool_case(1, 1, {6}, {2}, {2}, explicit_pad({{0, 0}})), *oracle, "weight_share");
  EXPECT_EQ(pool.disposition, Disposition::kSkipped);
  EXPECT_THAT(pool.message, HasSubstr("no weights"));
  Case special = share_case();
  special.data.fill = Fill::kSpecial;
  EXPECT_THAT(run_check(special, *oracle, "weight_share").message, HasSubstr("special"));
}

}  // namespace
}  // namespace kc
