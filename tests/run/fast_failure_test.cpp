// FastFailure: K crashed or timed-out results in a row hold back a backend's other cases,
// a result that ran in between resets the count, and --max-failures holds back every case.
#include "run/fast_failure.h"

#include <gtest/gtest.h>

namespace kc {
namespace {

CaseResult on(const std::string& backend, Disposition d) {
  CaseResult r;
  r.backend = backend;
  r.disposition = d;
  return r;
}

TEST(FastFailure, CrashesInARowHoldBackOnlyThatBackend) {
  FastFailure fast(0, 3);
  fast.observe(on("hangs", Disposition::kTimeout));
  fast.observe(on("hangs", Disposition::kCrashed));
  fast.observe(on("hangs", Disposition::kSkipped));  // says nothing about its health
  EXPECT_EQ(fast.skip_reason(on("hangs", Disposition::kPassed)), "");
  fast.observe(on("hangs", Disposition::kTimeout));
  EXPECT_EQ(fast.skip_reason(on("hangs", Disposition::kPassed)),
            "not run: 3 cases in a row crashed or timed out on hangs (--max-crashes 3)");
  EXPECT_EQ(fast.skip_reason(on("reference", Disposition::kPassed)), "");
}

TEST(FastFailure, AResultThatRanResetsTheRow) {
  FastFailure fast(0, 2);
  fast.observe(on("b", Disposition::kCrashed));
  fast.observe(on("b", Disposition::kFailed));
  fast.observe(on("b", Disposition::kCrashed));
  EXPECT_EQ(fast.skip_reason(on("b", Disposition::kPassed)), "");
}

TEST(FastFailure, MaxFailuresHoldsBackEveryCaseAndZeroMeansNoLimit) {
  FastFailure fast(2, 0);
  fast.observe(on("a", Disposition::kFailed));
  fast.observe(on("a", Disposition::kPassed));
  EXPECT_EQ(fast.skip_reason(on("b", Disposition::kPassed)), "");
  fast.observe(on("b", Disposition::kMistrusted));
  EXPECT_EQ(fast.skip_reason(on("c", Disposition::kPassed)), "not run: --max-failures 2 reached");
  FastFailure unlimited(0, 0);
  for (int i = 0; i < 100; ++i) unlimited.observe(on("a", Disposition::kCrashed));
  EXPECT_EQ(unlimited.skip_reason(on("a", Disposition::kPassed)), "");
}

}  // namespace
}  // namespace kc
