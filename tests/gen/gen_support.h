// Shared by the generator tests: how RapidCheck prints a Case (its one-line
// reproducer), and the op's field prefix in validate() messages.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>
#include <set>
#include <string>

#include "backend/invoke.h"
#include "gen/gen.h"
#include "kc/case.h"
#include "kc/case_io.h"

namespace kc {

inline void showValue(const Case& c, std::ostream& os) { os << case_to_one_line(c); }

namespace gen {
inline void showValue(const InvalidCase& c, std::ostream& os) {
  os << "rule " << c.rule << ", error \"" << c.error << "\"\n" << c.yaml;
}
}  // namespace gen

namespace test {

// Every feature in `wanted` was seen in some generated case.
inline void expect_seen(const std::set<std::string>& seen, std::initializer_list<const char*> wanted) {
  for (const char* want : wanted) EXPECT_TRUE(seen.count(want)) << "no generated case has " << want;
}

// The features of the first `count` cases of generator `g` (seed 1, case k).
template <class Gen, class Features>
std::set<std::string> features_seen(const Gen& g, uint64_t count, Features&& features) {
  std::set<std::string> seen;
  for (uint64_t k = 0; k < count; ++k) {
    for (const std::string& f : features(gen::generate(g, 1, k).value())) seen.insert(f);
  }
  return seen;
}

// What every generator must reach: each rank, dtype and the random and normal fills.
inline void expect_every_rank_dtype_and_fill(const std::set<std::string>& seen) {
  expect_seen(seen, {"rank1", "rank2", "rank3", "f64", "f32", "f16", "bf16", "fill.random", "fill.normal"});
}

inline const ConvParams& conv_of(const Case& c) {
  return op_traits(c).relu ? std::get<ConvBiasReluParams>(c.op).conv : std::get<ConvParams>(c.op);
}

}  // namespace test
}  // namespace kc
