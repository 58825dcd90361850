// Zero regions in generated cases (gen/zero_draft.h): about one case in ten of conv,
// conv_bias_relu and max pool zeroes a sample, a plane or a channel of x or a plane or a
// tile of dy, never the whole tensor; forward and backward judge those cases (PASSED on
// a correct candidate, the oracle under another name); steering keeps a region case's
// data where only the region blinds weight_share; shrinking drops the region.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <set>

#include "checks/checks.h"
#include "core/fill.h"
#include "core/validate.h"
#include "gen/gen.h"
#include "gen_support.h"
#include "kc/runner.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

std::string kind_of(const ZeroRegion& r) {
  if (r.tensor == ZeroTensor::kDy) return r.box.empty() ? "dy.plane" : "dy.tile";
  if (r.sample && r.channel) return "x.plane";
  return r.sample ? "x.sample" : "x.channel";
}

// The cases with a zero region among the first `count` of seed 1.
std::vector<Case> region_cases(uint64_t count, const gen::Options& options = {}) {
  const auto g = gen::valid_case(gen::kAllOps, options);
  std::vector<Case> out;
  for (uint64_t k = 0; k < count; ++k) {
    Case c = gen::generate(g, 1, k).value();
    if (!c.data.zero.empty()) out.push_back(std::move(c));
  }
  return out;
}

TEST(GenZero, AboutOneCaseInTenZeroesPartOfItsData) {
  const std::vector<Case> cases = region_cases(1000);
  EXPECT_GT(cases.size(), 70u);
  EXPECT_LT(cases.size(), 130u);
  std::set<std::string> seen;
  for (const Case& c : cases) {
    SCOPED_TRACE(case_to_one_line(c));
    ASSERT_EQ(c.data.zero.size(), 1u);
    EXPECT_TRUE(validate(c).ok()) << validate(c).message();
    const ZeroRegion& r = c.data.zero[0];
    seen.insert({kind_of(r), std::string(op_name(c.op))});
    if (r.tensor == ZeroTensor::kX) {
      EXPECT_EQ(c.tensors.count("x"), 0u);  // inline data wins: no dead region
    }
    // Never the whole tensor: all-zero data judges nothing.
    Case without = c;
    without.data.zero.clear();
    const OpInputs in = *make_inputs(c);
    const Tensor& t = r.tensor == ZeroTensor::kX ? in.x : in.dy;
    EXPECT_FALSE(std::all_of(t.data.begin(), t.data.end(), [](double v) { return v == 0.0; }));
  }
  test::expect_seen(seen,
                    {"x.sample", "x.plane", "x.channel", "dy.plane", "dy.tile", "conv", "conv_bias_relu", "maxpool"});
}

// A correct candidate (the oracle under another name, so that forward and backward
// compare it with the oracle) passes forward and backward on every region case with
// finite inputs (NaN and infinities make data MISTRUSTED of their own): the regions
// leave them data to judge.
TEST(GenZero, ForwardAndBackwardJudgeRegionCases) {
  gen::Options finite;
  finite.data = gen::kFiniteData;
  test::DelegatingBackend correct("delegate");
  int judged = 0;
  for (Case c : region_cases(600, finite)) {
    c.checks = {"forward", "backward"};
    const CaseResult r = check_case(c, correct);
    const bool inference = op_traits(c).indices && std::get<MaxPoolParams>(c.op).mode == PoolMode::kInference;
    for (const CheckResult& check : r.checks) {
      // A max pool in inference mode keeps no indices: no backward to judge.
      const bool none = inference && check.name == "backward";
      EXPECT_EQ(check.disposition, none ? Disposition::kSkipped : Disposition::kPassed)
          << check.name << ": " << check.message << "\n"
          << case_to_one_line(c);
    }
    judged += r.disposition == Disposition::kPassed;
  }
  EXPECT_GT(judged, 40);
}

// A whole sample of x at 0 makes dw over the other samples the right dw (weight_share's
// blind spot, MISTRUSTED). Steering keeps the drawn seed of a case whose zero region
// does that (the region is the point of the case), and redraws, as before, where the
// data itself does: the same zeros given inline.
TEST(GenZero, SteeringKeepsTheDataOfARegionCase) {
  Case c = test::conv_case(
      {.batch = 2, .channels = 2, .out_channels = 3, .spatial = {9}, .kernel = {3}, .dtype = DType::kF32});
  c.data = {41, Fill::kRandom, {{ZeroTensor::kX, 1, std::nullopt, {}}}};
  auto ref = make_reference_backend();
  Case ws = c;
  ws.checks = {"weight_share"};
  ASSERT_EQ(check_case(ws, *ref).disposition, Disposition::kMistrusted);
  int tried = 0;
  EXPECT_EQ(gen::steer_seed(c, [&](uint64_t) { ++tried; }).data.seed, 41u);
  EXPECT_EQ(tried, 1);
  Case given = c;
  given.tensors["x"] = make_inputs(c)->x;
  given.data.zero.clear();
  tried = 0;
  EXPECT_EQ(gen::steer_seed(given, [&](uint64_t) { ++tried; }).data.seed, 41u);  // no seed helps inline data
  EXPECT_EQ(tried, 6);
}

Case shrink(const rc::Shrinkable<Case>& root, const std::function<bool(const Case&)>& fails) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const gen::ShrinkOutcome out = gen::shrink_case(root, fails, deadline);
  EXPECT_FALSE(out.out_of_time);
  return out.smallest;
}

TEST(GenZero, ShrinkingDropsTheRegionOrKeepsTheOneAFailureNeeds) {
  const auto g = gen::valid_case(gen::kAllOps);
  int shrunk = 0;
  for (uint64_t k = 0; k < 200 && shrunk < 4; ++k) {
    const rc::Shrinkable<Case> root = gen::generate(g, 3, k);
    if (root.value().data.zero.empty()) continue;
    ++shrunk;
    EXPECT_TRUE(shrink(root, [](const Case&) { return true; }).data.zero.empty());
    const Case kept = shrink(root, [](const Case& c) { return !c.data.zero.empty(); });
    SCOPED_TRACE(case_to_one_line(kept));
    ASSERT_EQ(kept.data.zero.size(), 1u);
    EXPECT_TRUE(validate(kept).ok());
    EXPECT_EQ(kept.input.spatial.size(), 1u);  // everything else as small as a region allows
  }
  EXPECT_EQ(shrunk, 4);
}

}  // namespace
}  // namespace kc
