// gradcheck on max pools whose maxima tie (docs/checks.md, "Notes on individual checks"): elements tied for a
// window's maximum are moved as one group, joined across windows, and judged by their
// summed gradient; a routing that sends a tie's dy nowhere fails, one that picks another
// holder is the argmax check's; ties that merge every route, and near-ties no step can
// separate, are MISTRUSTED. Also the probes' rounding bound at the step's envelope.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "math_support.h"

namespace kc {
namespace {

using namespace math_test;
using ::testing::Not;
// Max pools over windows of two neighbours (kernel 2, stride 2, 1-D: window w holds
// 2w and 2w+1), whose backward mishandles windows whose maximum is held twice: it
// routes their dy to the last holder (against tie: first), or routes it nowhere.
class TieRouting : public test::DelegatingBackend {
 public:
  enum class Bug { kLastHolder, kDropped };
  explicit TieRouting(Bug bug) : DelegatingBackend("tie-routing"), bug_(bug) {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    x_ = x;
    return reference().maxpool_forward(g, x, y, indices);
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* idx, Tensor& dx) override {
    if (idx == nullptr) return reference().maxpool_backward(g, dy, idx, dx);  // argmax asks for the refusal
    IndexTensor routed = *idx;
    Tensor kept = dy;
    const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
    for (int64_t w = 0; w < dy.size(); ++w) {
      const int64_t plane = w / out * in, i = routed.data[static_cast<size_t>(w)];
      if (x_[plane + (i ^ 1)] != x_[plane + i]) continue;  // the window's other element
      if (bug_ == Bug::kLastHolder)
        routed.data[static_cast<size_t>(w)] = i | 1;
      else
        kept[w] = 0.0;
    }
    KC_ASSIGN_OR_RETURN(Tensor r, ref::maxpool_backward(g, kept, routed));
    dx.data = r.data;
    return ok_status();
  }

 private:
  Bug bug_;
  Tensor x_;
};

TEST(GradcheckCheck, TiedMaximaAreMovedAsOneAndTheirSummedGradientJudged) {
  // Three of four windows tie. Moving one tied element alone changes the argmax, so
  // before, 6 of 8 probes were non-differentiable and a backward that routes a tie's
  // dy nowhere passed gradcheck. The groups are now moved as one.
  Case c = seeded(pool_case(1, 1, {8}, {2}, {2}, explicit_pad({{0, 0}})), 15);
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 8}, {0.5, 0.5, 0.125, 0.375, 0.75, 0.75, -0.25, -0.25}};
  auto oracle = make_reference_backend();
  const CheckResult ok = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  EXPECT_THAT(ok.message, HasSubstr("3 groups of tied maxima (6 elements of x) moved as one"));
  EXPECT_THAT(ok.message, Not(HasSubstr("non-differentiable")));
  // Which holder gets the dy is the argmax check's to judge: their sum is right.
  TieRouting last(TieRouting::Bug::kLastHolder);
  EXPECT_EQ(run_check(c, last, "gradcheck").disposition, Disposition::kPassed);
  const CheckResult tie = run_check(c, last, "argmax");
  EXPECT_EQ(tie.disposition, Disposition::kFailed) << describe(tie);
  EXPECT_THAT(tie.message, HasSubstr("gradient must land only on indexed positions"));
  TieRouting dropped(TieRouting::Bug::kDropped);
  const CheckResult r = run_check(c, dropped, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("dx: 3 of 5 elements and groups of tied maxima disagree"));
  // A group's sum is named as one, not as the value of its first element.
  EXPECT_TRUE(std::any_of(r.worst.begin(), r.worst.end(), [](const WorstPoint& w) {
    return w.tensor == "dx (2 tied maxima summed, first)";
  })) << describe(r);
}

TEST(GradcheckCheck, TiedMaximaAreJoinedAcrossOverlappingWindows) {
  // Kernel 3, stride 1: 0 ~ 2 tie in window 1, 2 ~ 4 in window 3, so 0, 2 and 4 are one
  // group; moved as two pairs, each probe would break the other pair's tie.
  Case c = seeded(pool_case(1, 1, {7}, {3}, {1}, explicit_pad({{1, 1}})), 18);
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 7}, {0.5, 0.25, 0.5, 0.125, 0.5, -0.5, 0.75}};
  auto oracle = make_reference_backend();
  const CheckResult ok = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  EXPECT_THAT(ok.message, HasSubstr("1 group of tied maxima (3 elements of x)"));
  EXPECT_THAT(ok.message, Not(HasSubstr("non-differentiable")));
}

TEST(GradcheckCheck, TiesThatMergeEveryRouteAreMistrusted) {
  // x all 0.5 under overlapping 3x3 windows: each plane is one group, and gradcheck
  // could judge only that its dy adds up. A backward that routes every window's dy to
  // the plane's first element is the argmax check's to catch; gradcheck must not pass it.
  Case c = seeded(pool_case(1, 2, {5, 5}, {3, 3}, {1, 1}, explicit_pad({{1, 1}, {1, 1}})), 19);
  c.tensors["x"] = Tensor::filled(DType::kF64, {1, 2, 5, 5}, 0.5);
  class FirstOfPlane : public test::DelegatingBackend {
   public:
    FirstOfPlane() : DelegatingBackend("first-of-plane") {}
    Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* idx, Tensor& dx) override {
      if (idx == nullptr) return reference().maxpool_backward(g, dy, idx, dx);
      IndexTensor first = *idx;
      for (int64_t& i : first.data) i = 0;
      KC_ASSIGN_OR_RETURN(Tensor r, ref::maxpool_backward(g, dy, first));
      dx.data = r.data;
      return ok_status();
    }
  } be;
  auto oracle = make_reference_backend();
  for (Backend* b : {static_cast<Backend*>(oracle.get()), static_cast<Backend*>(&be)}) {
    const CheckResult r = run_check(c, *b, "gradcheck");
    EXPECT_EQ(r.disposition, Disposition::kMistrusted) << b->name() << ": " << describe(r);
    EXPECT_THAT(r.message, HasSubstr("tied maxima merge every element of x that receives gradient with another (32 "
                                     "of them into 2 sums)"))
        << b->name();
  }
  EXPECT_EQ(run_check(c, be, "argmax").disposition, Disposition::kFailed);
}

TEST(GradcheckCheck, TheRoundingOfAStepFarLargerThanTheElementIsAllowedFor) {
  // The step is 1/16 of x's scale (1e6), so the elements at 0.001 move to about 6e4 and
  // the loss (dy up to 2^53) rounds at that size, not at the case's own (the probe's
  // rounding is taken at its step's envelope). The tied group's sum cancels
  // (2^53 + 1 - 2^53): its rounding is bounded by the magnitudes, not by the sum. Under
  // `exact` only the error model stands between the oracle and a false failure: with
  // neither allowance the oracle failed here (either one alone covers this case).
  Case c = seeded(pool_case(1, 1, {8}, {2}, {1}, explicit_pad({{0, 0}})), 20);
  c.tolerance.kind = ToleranceKind::kExact;
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 8}, {0.001, 0.001, 0.001, -1e6, -1000000.5, -1000001, -1000002, 1e6}};
  const double big = 0x1p53;
  c.tensors["dy"] = Tensor{DType::kF64, {1, 1, 7}, {big, 1.0, -big, 0.0, 0.0, 0.0, 0.0}};
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  // The envelope alone is guarded by cases/regressions/*_gradcheck_rounding_*.yaml.
}

TEST(GradcheckCheck, TiedMaximaOnTheDirectionalPath) {
  // 720 elements of x in {-1, 0, 0.5, 1}: about a quarter of the windows tie, and every
  // random direction that moved their elements apart was non-differentiable.
  Case c = seeded(pool_case(2, 3, {120}, {2}, {2}, explicit_pad({{0, 0}})), 17);
  c.data.fill = Fill::kTies;
  auto oracle = make_reference_backend();
  const CheckResult ok = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(ok.disposition, Disposition::kPassed) << describe(ok);
  EXPECT_THAT(ok.message, HasSubstr("4 random directions v^T J u; "));
  EXPECT_THAT(ok.message, HasSubstr("groups of tied maxima"));
  EXPECT_THAT(ok.message, Not(HasSubstr("non-differentiable")));
  TieRouting last(TieRouting::Bug::kLastHolder), dropped(TieRouting::Bug::kDropped);
  EXPECT_EQ(run_check(c, last, "gradcheck").disposition, Disposition::kPassed)
      << describe(run_check(c, last, "gradcheck"));
  const CheckResult r = run_check(c, dropped, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("the disagreement is in dx"));
}

TEST(GradcheckCheck, NearTiesWithinTheSmallestStepAreMistrusted) {
  // Each window holds 0.5 and the next double: no step gradcheck may take keeps the
  // argmax of a probe that moves either, and they are not tied, so not moved as one.
  Case c = seeded(pool_case(1, 1, {8}, {2}, {2}, explicit_pad({{0, 0}})), 15);
  const double up = std::nextafter(0.5, 1.0);
  c.tensors["x"] = Tensor{DType::kF64, {1, 1, 8}, {0.5, up, 0.5, up, up, 0.5, up, 0.5}};
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "gradcheck");
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("8 of 8 probes non-differentiable"));
  EXPECT_THAT(r.message, Not(HasSubstr("tied maxima")));
}

}  // namespace
}  // namespace kc
