// Waivers applied to results: a failure a waiver describes is XFAIL, a waived check that
// passed is XPASS, a failure with another diagnosis stays FAILED, an expired waiver is
// ignored and named, and one that matched nothing is named.
#include "run/waivers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc {
namespace {

CaseResult with_check(const std::string& backend, Disposition d, const std::string& message) {
  CaseResult r;
  r.case_name = "conv2d same";
  r.source = "cases/conv/same.yaml:3";
  r.backend = backend;
  r.checks.push_back(CheckResult{"backward", d, message});
  r.checks.push_back(CheckResult{"shape", Disposition::kPassed, ""});
  roll_up(r);
  return r;
}

Waiver waiver(std::string case_glob, std::string backend, std::string diagnosis = "", std::string expires = "") {
  return Waiver{case_glob, backend, "backward", diagnosis, "known", expires, "w.yaml:2"};
}

TEST(Waivers, AFailureTheWaiverDescribesIsXfail) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kFailed, "dx: NaN at 3 elements")};
  const WaiverOutcome out = apply_waivers(rs, {waiver("*same*", "one*", "NaN")}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kXfail);
  EXPECT_EQ(rs[0].checks[0].message, "waived (w.yaml:2: known): dx: NaN at 3 elements");
  EXPECT_TRUE(out.unmatched.empty());
  EXPECT_TRUE(out.expired.empty());
}

TEST(Waivers, TheCaseGlobMatchesTheFileToo) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kFailed, "x")};
  apply_waivers(rs, {waiver("cases/conv/*.yaml", "onednn")}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kXfail);
}

TEST(Waivers, AnotherDiagnosisOrBackendStaysFailedAndTheWaiverIsUnmatched) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kFailed, "dw: 4 elements outside"),
                                with_check("cuda", Disposition::kFailed, "dx: NaN")};
  const WaiverOutcome out = apply_waivers(rs, {waiver("*", "onednn", "NaN")}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kFailed);
  EXPECT_EQ(rs[1].disposition, Disposition::kFailed);
  ASSERT_EQ(out.unmatched.size(), 1u);
  EXPECT_EQ(out.unmatched[0], "w.yaml:2: case *, backend onednn, check backward");
}

TEST(Waivers, AWaivedCheckThatPassedIsXpass) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kPassed, "")};
  apply_waivers(rs, {waiver("*", "*")}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kXpass);
  EXPECT_EQ(worse(Disposition::kXpass, Disposition::kMistrusted), Disposition::kXpass);
  EXPECT_EQ(worse(Disposition::kXfail, Disposition::kPassed), Disposition::kXfail);
}

TEST(Waivers, AnExpiredWaiverIsIgnoredAndNamed) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kFailed, "x")};
  const WaiverOutcome out = apply_waivers(rs, {waiver("*", "*", "", "2026-11-25")}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kFailed);
  ASSERT_EQ(out.expired.size(), 1u);
  EXPECT_EQ(out.expired[0], "w.yaml:2 (expired 2026-11-25): known");
  std::vector<CaseResult> today = {with_check("onednn", Disposition::kFailed, "x")};
  apply_waivers(today, {waiver("*", "*", "", "2026-11-26")}, "2026-11-26");  // its last day
  EXPECT_EQ(today[0].disposition, Disposition::kXfail);
}

}  // namespace
}  // namespace kc
