// The exit-code rules and the summary keys of a run's results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <string>
#include <thread>

#include <Eigen/Core>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "judge/tolerance.h"
#include "kc/report.h"
#include "kc/runner.h"
#include "run/isolate.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"
#include "support/f32_direct.h"

namespace kc {
namespace {

TEST(Report, ExitCodesAndSummaryKeys) {
  auto with = [](std::initializer_list<Disposition> ds) {
    std::vector<CaseResult> rs;
    for (Disposition d : ds) rs.push_back(CaseResult{"c", "f:1", "reference", d, "", {}, "", 0});
    return rs;
  };
  EXPECT_EQ(exit_code(with({Disposition::kPassed, Disposition::kSkipped})), 0);
  EXPECT_EQ(exit_code(with({Disposition::kPassed, Disposition::kMistrusted})), 1);
  EXPECT_EQ(exit_code(with({Disposition::kInvalid, Disposition::kCrashed})), 2);  // invalid input wins
  EXPECT_EQ(exit_code(with({Disposition::kFailed, Disposition::kInvalid})), 2);
  EXPECT_EQ(exit_code(with({Disposition::kInvalid, Disposition::kPassed})), 2);
  const auto counts = summary_counts(with({Disposition::kPassed, Disposition::kTimeout}));
  EXPECT_EQ(counts.at("passed"), 1);
  EXPECT_EQ(counts.at("timeout"), 1);
  EXPECT_EQ(counts.at("failed"), 0);
  const std::string json = report_json(with({Disposition::kFailed}), RunInfo{});
  EXPECT_NE(json.find("\"summary\": {"), std::string::npos);
  EXPECT_NE(json.find("\"disposition\": \"FAILED\""), std::string::npos);
}

}  // namespace
}  // namespace kc
