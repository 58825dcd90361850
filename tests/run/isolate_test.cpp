// Worker isolation: a crash and a hang become dispositions and the run goes on; workers
// share the cores; a group's tasks share a worker, each with its own timeout, and a
// crash costs only its own result.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <functional>
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

CaseResult pid_result(const char* name) {
  CaseResult r;
  r.case_name = name;
  r.message = std::to_string(getpid());
  return r;
}

// A group's tasks run one after another in one worker; one that crashes costs only its
// own result, and the tasks after it run in a fresh worker.
TEST(IsolationGroups, ACrashCostsOnlyItsTaskAndTheRestRunInAFreshWorker) {
  CaseResult label;
  label.case_name = "crash";
  IsolatedGroup g;
  g.tasks.push_back({label, [] { return pid_result("a"); }});
  g.tasks.push_back({label, [] { return pid_result("b"); }});
  g.tasks.push_back({label, []() -> CaseResult {
                       std::raise(SIGSEGV);
                       return {};
                     }});
  g.tasks.push_back({label, [] { return pid_result("d"); }});
  IsolatedGroup other;
  other.tasks.push_back({label, [] { return pid_result("e"); }});
  const auto results = run_groups({g, other}, IsolateOptions{1, 10.0, false, nullptr});
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].case_name, "a");
  EXPECT_EQ(results[1].case_name, "b");
  EXPECT_EQ(results[0].message, results[1].message);  // the same worker
  EXPECT_EQ(results[2].disposition, Disposition::kCrashed);
  EXPECT_NE(results[2].message.find("signal"), std::string::npos);
  EXPECT_EQ(results[3].case_name, "d");
  EXPECT_NE(results[3].message, results[0].message);  // a fresh worker
  EXPECT_EQ(results[4].case_name, "e");
  EXPECT_NE(results[4].message, results[3].message);  // another group, another worker
}

// Each task has the timeout to itself, counted from the result before it.
TEST(IsolationGroups, EachTaskHasItsOwnTimeout) {
  CaseResult label;
  label.case_name = "slow";
  IsolatedGroup g;
  for (int i = 0; i < 3; ++i) {
    g.tasks.push_back({label, [] {
                         std::this_thread::sleep_for(std::chrono::milliseconds(700));
                         return pid_result("in time");
                       }});
  }
  g.tasks.push_back({label, [] {
                       std::this_thread::sleep_for(std::chrono::seconds(30));
                       return CaseResult{};
                     }});
  g.tasks.push_back({label, [] { return pid_result("after"); }});
  const auto results = run_groups({g}, IsolateOptions{1, 1.5, false, nullptr});
  ASSERT_EQ(results.size(), 5u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(results[i].case_name, "in time") << i;
  EXPECT_EQ(results[3].disposition, Disposition::kTimeout);
  EXPECT_EQ(results[4].case_name, "after");
}

// What the first task computed is there for the next: they share the worker's memory.
TEST(IsolationGroups, TasksShareTheWorkersMemory) {
  auto shared = std::make_shared<int>(0);
  CaseResult label;
  IsolatedGroup g;
  g.tasks.push_back({label, [shared] {
                       *shared = 41;
                       return CaseResult{};
                     }});
  g.tasks.push_back({label, [shared] {
                       CaseResult r;
                       r.message = std::to_string(*shared + 1);
                       return r;
                     }});
  const auto results = run_groups({g}, IsolateOptions{1, 10.0, false, nullptr});
  EXPECT_EQ(results[1].message, "42");
  EXPECT_EQ(*shared, 0);  // the parent's copy: nothing came back but the results
}

}  // namespace
}  // namespace kc

namespace kc {
namespace {

// A task that forks a descendant holding every descriptor of the worker (its result pipe
// among them), which reports its pid on `pids` and sleeps; `then` is what the worker does next.
IsolatedTask with_descendant(int pids, std::function<CaseResult()> then) {
  CaseResult label;
  label.case_name = "descendant";
  return {label, [pids, then] {
            int ready[2];
            if (pipe(ready) != 0) return CaseResult{};
            if (fork() == 0) {
              const pid_t me = getpid();
              (void)!write(pids, &me, sizeof me);
              (void)!write(ready[1], "x", 1);
              for (;;) pause();
            }
            char c;
            (void)!read(ready[0], &c, 1);  // its pid is sent before the worker goes on
            return then();
          }};
}

// Whether `pid` is gone (a zombie child of this process is reaped first).
bool gone(pid_t pid) {
  if (pid <= 0) return false;
  for (int i = 0; i < 200; ++i) {
    waitpid(pid, nullptr, WNOHANG);
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class Descendants : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pipe(pids_), 0); }
  void TearDown() override {
    close(pids_[0]);
    close(pids_[1]);
  }
  // The pid a descendant sent, or 0 when none came within 10 s (the test fails, never hangs).
  pid_t descendant() {
    pollfd p{pids_[0], POLLIN, 0};
    pid_t pid = 0;
    if (poll(&p, 1, 10000) != 1 || read(pids_[0], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) {
      ADD_FAILURE() << "no descendant sent its pid";
      return 0;
    }
    return pid;
  }
  int pids_[2] = {-1, -1};
};

TEST_F(Descendants, AResultThatArrivedIsUsedAndTheDescendantIsKilled) {
  const auto start = std::chrono::steady_clock::now();
  const auto results = run_tasks({with_descendant(pids_[1],
                                                  [] {
                                                    CaseResult r;
                                                    r.case_name = "arrived";
                                                    r.disposition = Disposition::kPassed;
                                                    return r;
                                                  })},
                                 IsolateOptions{1, 30.0, false, nullptr});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].disposition, Disposition::kPassed);
  EXPECT_EQ(results[0].case_name, "arrived");
  EXPECT_NE(results[0].message.find("still running when the case ended"), std::string::npos) << results[0].message;
  EXPECT_LT(took, 10.0);
  EXPECT_TRUE(gone(descendant()));
}

// What a group's task left running is killed before the next task starts, and named on
// the result of the task that started it.
TEST_F(Descendants, OneLeftByATaskOfAGroupIsNamedOnThatTasksResult) {
  CaseResult label;
  IsolatedGroup g;
  g.tasks.push_back(with_descendant(pids_[1], [] { return CaseResult{}; }));
  g.tasks.push_back({label, [] { return CaseResult{}; }});
  const auto results = run_groups({g}, IsolateOptions{1, 30.0, false, nullptr});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(results[0].message.find("still running when the case ended"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[1].message, "");
  EXPECT_TRUE(gone(descendant()));
}

TEST_F(Descendants, TheTimeoutIsTheParentsClockWhateverThePipeDoes) {
  const auto start = std::chrono::steady_clock::now();
  const auto results = run_tasks({with_descendant(pids_[1],
                                                  [] {
                                                    std::this_thread::sleep_for(std::chrono::seconds(60));
                                                    return CaseResult{};
                                                  })},
                                 IsolateOptions{1, 1.0, false, nullptr});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(results[0].disposition, Disposition::kTimeout);
  EXPECT_LT(took, 10.0);
  EXPECT_TRUE(gone(descendant()));
}

TEST_F(Descendants, AWorkerThatExitsWithoutAResultIsCrashedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  const auto results =
      run_tasks({with_descendant(pids_[1], []() -> CaseResult { _exit(0); })}, IsolateOptions{1, 30.0, false, nullptr});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(results[0].disposition, Disposition::kCrashed);
  EXPECT_NE(results[0].message.find("exited with status 0 without a complete result"), std::string::npos);
  EXPECT_LT(took, 10.0);
  EXPECT_TRUE(gone(descendant()));
}

TEST_F(Descendants, OneThatLeftTheGroupIsKilledToo) {
  CaseResult label;
  const int pids = pids_[1];
  const auto results = run_tasks({{label,
                                   [pids] {
                                     int left[2];
                                     if (pipe(left) != 0) return CaseResult{};
                                     if (fork() == 0) {
                                       setsid();
                                       const pid_t me = getpid();
                                       (void)!write(pids, &me, sizeof me);
                                       (void)!write(left[1], "x", 1);
                                       for (;;) pause();
                                     }
                                     char c;
                                     (void)!read(left[0], &c, 1);  // it has left the group
                                     return CaseResult{};
                                   }}},
                                 IsolateOptions{1, 30.0, false, nullptr});
  EXPECT_NE(results[0].message.find("left the worker's process group were killed"), std::string::npos)
      << results[0].message;
  EXPECT_TRUE(gone(descendant()));
}

}  // namespace
}  // namespace kc
