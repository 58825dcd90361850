// Worker isolation: a crash and a hang become dispositions and the run goes on; workers
// share the cores.
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
#include "kc/report.h"
#include "kc/runner.h"
#include "run/isolate.h"
#include "run/tolerance.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"
#include "support/f32_direct.h"

namespace kc {
namespace {

TEST(Isolation, CrashAndHangBecomeDispositionsAndTheRunGoesOn) {
  CaseResult label;
  label.case_name = "t";
  std::vector<IsolatedTask> tasks;
  tasks.push_back({label, [] {
                     std::raise(SIGSEGV);
                     return CaseResult{};
                   }});
  tasks.push_back({label, [] {
                     std::this_thread::sleep_for(std::chrono::seconds(30));
                     return CaseResult{};
                   }});
  tasks.push_back(
      {label, [] {
         CaseResult r;
         r.case_name = "fine";
         r.checks.push_back({"forward", Disposition::kFailed, "msg", 2.5, 1e-3, {{"y", {0, 1}, 1.5, 2.0, 0.25}}});
         r.disposition = Disposition::kFailed;
         return r;
       }});
  const auto results = run_tasks(tasks, IsolateOptions{2, 1.0, false, nullptr});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].disposition, Disposition::kCrashed);
  EXPECT_NE(results[0].message.find("signal"), std::string::npos);
  EXPECT_EQ(results[1].disposition, Disposition::kTimeout);
  EXPECT_EQ(results[2].case_name, "fine");  // the result crossed the pipe intact
  ASSERT_EQ(results[2].checks.size(), 1u);
  EXPECT_EQ(results[2].checks[0].worst.at(0).index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(results[2].checks[0].max_error_ratio, 2.5);
}

// Each of N forked workers gets cores / N threads for its checks' probes, so that a run
// with --jobs N holds about as many threads as cores (a run with fewer tasks than jobs
// has that many workers); outside run_tasks: one per core.
TEST(Isolation, WorkersShareTheCores) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(task_threads(), cores);
  CaseResult label;
  label.case_name = "t";
  for (const auto& [jobs, count] :
       {std::pair{1, 3}, std::pair{2, 4}, std::pair{3 * cores, 3 * cores}, std::pair{4, 1}}) {
    std::vector<IsolatedTask> tasks;
    for (int t = 0; t < count; ++t) {
      tasks.push_back({label, [] {
                         CaseResult r;
                         r.message = std::to_string(task_threads());
                         return r;
                       }});
    }
    const auto results = run_tasks(tasks, IsolateOptions{jobs, 10.0, false, nullptr});
    ASSERT_EQ(results.size(), static_cast<size_t>(count));
    const int workers = std::min(jobs, count);
    for (const CaseResult& r : results) {
      EXPECT_EQ(r.message, std::to_string(std::max(1, cores / workers))) << jobs << " jobs, " << count << " tasks";
    }
    EXPECT_EQ(task_threads(), cores);
  }
}

}  // namespace
}  // namespace kc
