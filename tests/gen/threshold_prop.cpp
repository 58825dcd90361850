// Threshold cases (gen/threshold.h): every size a threshold draft makes large sits at
// 2^k - 1, 2^k or 2^k + 1, the case stays valid and within the reference's cost budget,
// and the generated run reaches every kind of large size (batch, channels in and out per
// group, depthwise groups and multiplier, an output extent, a max pool's channels, 1-D
// windows past 256 taps and global 2-D pools).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <set>

#include "core/validate.h"
#include "gen/gen.h"
#include "gen/threshold.h"
#include "gen_support.h"
#include "kc/shape.h"

namespace kc {
namespace {

using test::conv_of;

bool at_power_of_two(int64_t v) {
  for (int k = 1; k < 20; ++k) {
    if (std::abs(v - (int64_t{1} << k)) <= 1) return true;
  }
  return false;
}

// The sizes of a case that are larger than the small caps of a threshold case allow
// (threshold_caps: batch 2, 2 groups of 3 channels, a max pool's 3 channels, short
// extents and windows): each must be one of the drawn large sizes.
std::vector<int64_t> past_small_caps(const Case& c) {
  std::vector<int64_t> large;
  if (c.input.batch > 2) large.push_back(c.input.batch);
  if (op_traits(c).indices) {
    const PoolGeometry g = unchecked_pool_geometry(c);
    if (c.input.channels > 3) large.push_back(c.input.channels);
    if (g.spatial.kernel_count() > 100) large.push_back(g.spatial.kernel_dims()[0]);
    for (int64_t o : g.spatial.out_dims())
      if (o > 30) large.push_back(o);
    return large;
  }
  const ConvGeometry g = unchecked_conv_geometry(c);
  if (g.groups > 2) large.push_back(g.groups);
  if (g.in_per_group() > 3) large.push_back(g.in_per_group());
  if (g.out_per_group() > 3) large.push_back(g.out_per_group());
  for (int64_t o : g.spatial.out_dims())
    if (o > 30) large.push_back(o);
  return large;
}

RC_GTEST_PROP(GenThreshold, LargeSizesSitAtPowersOfTwoAndStayCheap, ()) {
  gen::Options small;
  small.caps = gen::detail::threshold_caps(gen::Caps{});
  small.caps.wide_percent = small.caps.threshold_percent = small.caps.zero_percent = 0;
  small.caps.aligned_percent = 0;
  small.steer = false;
  small.data = 0;
  const bool pool = *rc::gen::arbitrary<bool>();
  const Case c = *(pool ? gen::op_case_of<MaxPoolParams>(small) : gen::op_case_of<ConvParams>(small));
  const gen::detail::ThresholdDraft d = *gen::detail::threshold_draft();
  const Case t = gen::detail::apply_threshold(c, d, gen::Caps{});
  RC_ASSERT(validate(t).ok());
  const std::vector<int64_t> large = past_small_caps(t);
  for (int64_t v : large) {
    if (!at_power_of_two(v)) RC_FAIL(std::to_string(v) + " is no 2^k - 1, 2^k or 2^k + 1: " + case_to_one_line(t));
  }
  // Within the budget, or one large size whose case cannot be cut further (the model
  // errs high: those measure well under 100 ms).
  const int64_t cost = gen::detail::threshold_cost_of(t), budget = gen::Caps{}.threshold_cost;
  RC_ASSERT(cost <= budget || (large.size() <= 1 && cost <= 8 * budget));
  RC_TAG(large.empty() ? "no large size" : large.size() == 1 ? "one large size" : "two large sizes");
}

// The threshold features of a generated case: sizes no usual or wide case reaches.
std::set<std::string> threshold_features(const Case& c) {
  std::set<std::string> f;
  if (c.input.batch > 5) f.insert("batch");
  if (op_traits(c).indices) {
    const PoolGeometry g = unchecked_pool_geometry(c);
    if (c.input.channels > 5) f.insert("pool.channels");
    if (g.spatial.rank() == 1 && g.spatial.kernel_count() >= 255) f.insert("pool.window_1d");
    if (g.spatial.rank() == 2 && g.spatial.kernel_count() >= 225 && g.spatial.out_count() == 1)
      f.insert("pool.global_2d");
    for (int64_t o : g.spatial.out_dims())
      if (o >= 127) f.insert("pool.extent");
    return f;
  }
  const ConvGeometry g = unchecked_conv_geometry(c);
  if (g.in_per_group() > 40) f.insert("in_per_group");
  if (g.out_per_group() > 40 && g.in_per_group() > 1) f.insert("out_per_group");
  if (g.groups > 4 && g.groups == g.in_channels) f.insert("depthwise_groups");
  if (g.out_per_group() > 40 && g.groups == g.in_channels) f.insert("depthwise_multiplier");
  for (int64_t o : g.spatial.out_dims())
    if (o >= 127) f.insert("extent");
  return f;
}

TEST(GenThreshold, GeneratedRunsReachEveryLargeSizeWithinTheBudget) {
  const auto g = gen::valid_case(gen::kAllOps);
  std::set<std::string> seen;
  int threshold = 0;
  for (uint64_t k = 0; k < 3000; ++k) {
    const Case c = gen::generate(g, 1, k).value();
    const std::set<std::string> f = threshold_features(c);
    threshold += !f.empty();
    if (!f.empty()) {  // as the property above: one large size may stay above the budget
      EXPECT_LE(gen::detail::threshold_cost_of(c), 8 * gen::Caps{}.threshold_cost) << case_to_one_line(c);
    }
    seen.insert(f.begin(), f.end());
  }
  test::expect_seen(seen, {"batch", "in_per_group", "out_per_group", "depthwise_groups", "depthwise_multiplier",
                           "extent", "pool.channels", "pool.window_1d", "pool.global_2d", "pool.extent"});
  // About 8 in 100 are threshold cases; a few of their large sizes (extents below 127)
  // are not counted here.
  EXPECT_GT(threshold, 3000 * 4 / 100);
  EXPECT_LT(threshold, 3000 * 10 / 100);
}

}  // namespace
}  // namespace kc
