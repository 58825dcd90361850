// Shared by the tests of validate.cpp and validate_limits.cpp: a valid conv and max pool
// to edit, and the assertions on validate()'s verdict.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/validate.h"
#include "kc/case.h"

namespace kc::validate_test {

inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A valid conv: [2, 4, 8, 8] -> 6 channels, 3x3, groups 2, pad 1 (y [2, 6, 8, 8]).
inline Case conv_case() {
  Case c;
  c.input = {2, 4, {8, 8}};
  c.op = ConvParams{6, {3, 3}, {}, {}, 2, {PadKind::kExplicit, {{1, 1}, {1, 1}}}};
  return c;
}
inline ConvParams& conv(Case& c) { return std::get<ConvParams>(c.op); }

// A valid max pool: [1, 2, 9, 9], 3x3 window, stride 2, pad 1 (y [1, 2, 5, 5]).
inline Case pool_case() {
  Case c;
  c.input = {1, 2, {9, 9}};
  c.op = MaxPoolParams{{3, 3}, {2, 2}, {}, {PadKind::kExplicit, {{1, 1}, {1, 1}}}};
  return c;
}
inline MaxPoolParams& pool(Case& c) { return std::get<MaxPoolParams>(c.op); }

inline void expect_ok(const Case& c, const Limits& limits = Limits{}) {
  const Status s = validate(c, limits);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

// The error has `code` and its message contains every part (field and rule).
inline void expect_error(const Case& c, StatusCode code, std::initializer_list<const char*> parts,
                         const Limits& limits = Limits{}) {
  const Status s = validate(c, limits);
  ASSERT_FALSE(s.ok()) << "accepted; wanted an error with " << *parts.begin();
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const char* part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "'" << part << "' not in: " << s.message();
  }
}

}  // namespace kc::validate_test
