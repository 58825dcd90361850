// Shared by the generator tests: how RapidCheck prints a Case (its one-line
// reproducer), and the op's field prefix in validate() messages.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>
#include <set>
#include <string>

#include "backend/invoke.h"  // is_fused
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

inline const ConvParams& conv_of(const Case& c) {
  return is_fused(c) ? std::get<ConvBiasReluParams>(c.op).conv : std::get<ConvParams>(c.op);
}

}  // namespace test
}  // namespace kc
