// Waivers applied to results: a failure a waiver describes is XFAIL, a waived check that
// passed is XPASS, a failure with another diagnosis stays FAILED, an expired waiver is
// ignored and named, and one that matched nothing on a case of the run is named (one for
// a case not in the run is counted).
#include "run/waivers.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  EXPECT_EQ(out.unmatched_elsewhere, 0);
}

// A waiver for a case or a backend this run did not hold (a run of one folder or one
// backend, a shard) is counted, not named: only a waiver whose case ran on its backend
// and still matched nothing is stale.
TEST(Waivers, OneForACaseNotInTheRunIsCountedNotNamed) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kFailed, "dx: NaN")};  // conv2d same
  const WaiverOutcome out = apply_waivers(
      rs, {waiver("pool2d*", "onednn", "NaN"), waiver("conv2d*", "cudnn"), waiver("conv2d*", "one*", "inf")},
      "2026-11-26");
  EXPECT_EQ(out.unmatched_elsewhere, 2);
  ASSERT_EQ(out.unmatched.size(), 1u);
  EXPECT_NE(out.unmatched[0].find("case conv2d*, backend one*"), std::string::npos);
  const std::string text = waivers_text(out, rs, true);
  EXPECT_NE(text.find("2 waiver(s) for cases or backends not in this run"), std::string::npos) << text;
  EXPECT_EQ(text.find("case pool2d*"), std::string::npos) << text;
}

TEST(Waivers, AWaivedCheckThatPassedIsXpass) {
  std::vector<CaseResult> rs = {with_check("onednn", Disposition::kPassed, "")};
  apply_waivers(rs, {waiver("*", "*")}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kXpass);
  EXPECT_EQ(worse(Disposition::kXpass, Disposition::kMistrusted), Disposition::kXpass);
  EXPECT_EQ(worse(Disposition::kXfail, Disposition::kPassed), Disposition::kXfail);
}

// A failure that depends on memory a library never wrote comes and goes: its waiver
// makes the failure XFAIL and leaves a pass PASSED, counted in the summary.
TEST(Waivers, AnIntermittentWaiverLeavesAPassAsItIs) {
  Waiver w = waiver("*", "*", "dx");
  w.intermittent = true;
  std::vector<CaseResult> rs = {with_check("torch", Disposition::kPassed, ""),
                                with_check("torch", Disposition::kFailed, "dx: 3 of 9 elements outside")};
  const WaiverOutcome out = apply_waivers(rs, {w}, "2026-11-26");
  EXPECT_EQ(rs[0].disposition, Disposition::kPassed);
  EXPECT_EQ(rs[1].disposition, Disposition::kXfail);
  EXPECT_EQ(out.intermittent_passed, 1);
  EXPECT_TRUE(out.unmatched.empty());
  const std::string text = waivers_text(out, rs, true);
  EXPECT_NE(text.find("1 check(s) an intermittent waiver names passed this time (not XPASS)"), std::string::npos)
      << text;
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

// A library's kernels, and so its known bugs, may depend on the CPU's instructions: a
// waiver for a flag this CPU lacks is not applied (its failure stays, its pass is no
// XPASS) and is counted; one for a flag it has applies.
TEST(Waivers, AWaiverForAnotherCpuFlagIsNotApplied) {
  Waiver w = waiver("*", "*");
  w.cpu = "avx512_bf16";
  std::vector<CaseResult> failed = {with_check("onednn", Disposition::kFailed, "x")};
  std::vector<CaseResult> passed = {with_check("onednn", Disposition::kPassed, "")};
  const WaiverOutcome out = apply_waivers(failed, {w}, "2026-11-26", {"fpu", "avx2"});
  apply_waivers(passed, {w}, "2026-11-26", {"fpu", "avx2"});
  EXPECT_EQ(failed[0].disposition, Disposition::kFailed);
  EXPECT_EQ(passed[0].disposition, Disposition::kPassed);
  EXPECT_EQ(out.other_cpu, 1);
  EXPECT_TRUE(out.unmatched.empty());
  EXPECT_NE(waivers_text(out, failed, true).find("1 waiver(s) for CPUs with a flag this one lacks"), std::string::npos);
  std::vector<CaseResult> here = {with_check("onednn", Disposition::kFailed, "x")};
  EXPECT_EQ(apply_waivers(here, {w}, "2026-11-26", {"fpu", "avx512_bf16"}).other_cpu, 0);
  EXPECT_EQ(here[0].disposition, Disposition::kXfail);
}

// This machine's flags are read from /proc/cpuinfo: any x86-64 CPU lists fpu.
TEST(Waivers, ThisCpusFlagsAreRead) {
#if defined(__x86_64__)
  const std::vector<std::string>& flags = this_cpu_flags();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "fpu"), flags.end());
#endif
}

}  // namespace
}  // namespace kc
