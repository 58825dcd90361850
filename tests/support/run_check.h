// Running one check of a case on a backend, and stating what it must say, for the tests
// of the checks: a missing check never looks like a pass.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "checks/checks.h"
#include "kc/runner.h"

namespace kc::test {

// Runs only the named check and returns its result (FAILED with the case's message when
// the runner did not report it, so a missing check can never look like a pass).
inline CheckResult run_check(Case c, Backend& be, const std::string& name) {
  c.checks = {name};
  const CaseResult r = check_case(c, be);
  for (const CheckResult& cr : r.checks) {
    if (cr.name == name) return cr;
  }
  return make_result(name, Disposition::kCrashed, "check not reported: " + r.message);
}

#define EXPECT_DISPOSITION(result, want) \
  EXPECT_EQ(disposition_name((result).disposition), disposition_name(want)) << (result).message
#define EXPECT_MESSAGE_HAS(result, text) EXPECT_NE((result).message.find(text), std::string::npos) << (result).message

// Runs only the named check and expects its disposition and every fragment of its message:
// the whole of a planted-bug test whose result is not looked at further.
inline void expect_check(const Case& c, Backend& be, const std::string& name, Disposition want,
                         std::initializer_list<const char*> fragments = {}) {
  const CheckResult r = run_check(c, be, name);
  EXPECT_DISPOSITION(r, want);
  for (const char* text : fragments) EXPECT_MESSAGE_HAS(r, text) << "\n(wanted: " << text << ")";
}

}  // namespace kc::test
