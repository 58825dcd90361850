// RunProgress: on a terminal a line per result with counts, failures, elapsed and time
// left; elsewhere a line only once the period has passed, none at the end (the summary
// follows); the durations as people read them.
#include "cli/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace kc::cli {
namespace {

std::string written(std::FILE* f) {
  std::fflush(f);
  std::string s;
  std::rewind(f);
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) s += static_cast<char>(c);
  return s;
}

CaseResult result(Disposition d) {
  CaseResult r;
  r.case_name = "conv2d k3";
  r.backend = "onednn";
  r.disposition = d;
  return r;
}

TEST(RunProgress, OnATerminalEveryResultRewritesTheLine) {
  std::FILE* f = std::tmpfile();
  double t = 0.0;
  RunProgress p(f, true, 30.0, [&t] { return t; });
  t = 10.0;
  p(1, 4, result(Disposition::kFailed));
  t = 20.0;
  p(2, 4, result(Disposition::kPassed));
  const std::string s = written(f);
  EXPECT_NE(s.find("\r\033[K[1/4 results, 1 failure, 10 s elapsed, about 30 s left] conv2d k3 [onednn]"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("[2/4 results, 1 failure, 20 s elapsed, about 20 s left]"), std::string::npos) << s;
  std::fclose(f);
}

TEST(RunProgress, ElsewhereALineEveryPeriod) {
  std::FILE* f = std::tmpfile();
  double t = 0.0;
  RunProgress p(f, false, 30.0, [&t] { return t; });
  t = 10.0;
  p(1, 10, result(Disposition::kPassed));  // within the period: nothing
  t = 31.0;
  p(2, 10, result(Disposition::kCrashed));
  t = 40.0;
  p(3, 10, result(Disposition::kPassed));  // 9 s after the last line: nothing
  t = 70.0;
  p(10, 10, result(Disposition::kPassed));  // the end: the summary says it
  EXPECT_EQ(written(f), "kcheck: 2/10 results, 1 failure, 31 s elapsed, about 2 min 04 s left\n");
  std::fclose(f);
}

TEST(RunProgress, DurationsReadAsPeopleSayThem) {
  EXPECT_EQ(duration_text(0.4), "0 s");
  EXPECT_EQ(duration_text(59.4), "59 s");
  EXPECT_EQ(duration_text(125), "2 min 05 s");
  EXPECT_EQ(duration_text(3720), "1 h 02 min");
  EXPECT_EQ(duration_text(-3), "0 s");
}

}  // namespace
}  // namespace kc::cli
