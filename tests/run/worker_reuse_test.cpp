// A worker serves several cases (IsolateOptions::cases_per_worker) and is replaced after
// that many, after a crash or a timeout, a failed integrity check, or a change in its
// process state (environment, working directory, threads), so that a case never starts in
// a process an earlier case changed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "run/isolate.h"

namespace kc {
namespace {

// A result naming the process that made it.
CaseResult in_pid(const std::string& name) {
  CaseResult r;
  r.case_name = name;
  r.message = std::to_string(getpid());
  return r;
}

// One group per task body: each a case of its own.
std::vector<IsolatedGroup> cases_of(const std::vector<std::function<CaseResult()>>& bodies) {
  std::vector<IsolatedGroup> groups;
  for (const auto& body : bodies) groups.push_back({{{CaseResult{}, body}}});
  return groups;
}

IsolateOptions serial(int cases_per_worker) {
  IsolateOptions o{1, 10.0, false, nullptr};
  o.cases_per_worker = cases_per_worker;
  return o;
}

std::vector<std::function<CaseResult()>> plain(int n) {
  std::vector<std::function<CaseResult()>> bodies;
  for (int i = 0; i < n; ++i) bodies.push_back([i] { return in_pid("c" + std::to_string(i)); });
  return bodies;
}

TEST(WorkerReuse, AWorkerServesUpToItsCountOfCases) {
  const auto results = run_groups(cases_of(plain(5)), serial(2));
  ASSERT_EQ(results.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(results[i].case_name, "c" + std::to_string(i));
  EXPECT_EQ(results[0].message, results[1].message);
  EXPECT_NE(results[1].message, results[2].message);
  EXPECT_EQ(results[2].message, results[3].message);
  EXPECT_NE(results[3].message, results[4].message);
  EXPECT_NE(results[0].message, std::to_string(getpid()));  // never this process
}

TEST(WorkerReuse, OneCasePerWorkerIsAFreshProcessEachTime) {
  const auto results = run_groups(cases_of(plain(4)), serial(1));
  std::set<std::string> pids;
  for (const CaseResult& r : results) pids.insert(r.message);
  EXPECT_EQ(pids.size(), 4u);
}

TEST(WorkerReuse, TheCaseAfterACrashStartsInAFreshWorker) {
  auto bodies = plain(4);
  bodies[1] = []() -> CaseResult {
    std::raise(SIGSEGV);
    return {};
  };
  const auto results = run_groups(cases_of(bodies), serial(100));
  EXPECT_EQ(results[1].disposition, Disposition::kCrashed);
  EXPECT_EQ(results[2].case_name, "c2");
  EXPECT_NE(results[2].message, results[0].message);
  EXPECT_EQ(results[2].message, results[3].message);
}

TEST(WorkerReuse, TheCaseAfterATimeoutStartsInAFreshWorker) {
  auto bodies = plain(3);
  bodies[1] = [] {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return CaseResult{};
  };
  IsolateOptions o = serial(100);
  o.timeout_seconds = 1.0;
  const auto results = run_groups(cases_of(bodies), o);
  EXPECT_EQ(results[1].disposition, Disposition::kTimeout);
  EXPECT_EQ(results[2].case_name, "c2");
  EXPECT_NE(results[2].message, results[0].message);
}

// What a case changed in its process is never what the next case starts in.
TEST(WorkerReuse, AChangedEnvironmentOrDirectoryRetiresTheWorker) {
  for (const std::function<void()>& change : std::vector<std::function<void()>>{
           [] { setenv("KC_WORKER_REUSE_TEST", "1", 1); },
           [] { (void)chdir("/"); },
       }) {
    auto bodies = plain(3);
    bodies[1] = [change] {
      change();
      return in_pid("changer");
    };
    const auto results = run_groups(cases_of(bodies), serial(100));
    EXPECT_EQ(results[0].message, results[1].message);  // the change is made in the shared worker
    EXPECT_NE(results[2].message, results[1].message);  // and not seen by the next case
    EXPECT_EQ(results[2].case_name, "c2");
  }
}

// A library's thread pool, made in a worker's first case, stays for the cases after it; a
// thread a later case leaves running ends the worker's service.
TEST(WorkerReuse, ThreadsLeftByALaterCaseRetireTheWorker) {
  auto bodies = plain(5);
  auto leave_thread = [](const char* name) {
    return [name] {
      std::thread([] { std::this_thread::sleep_for(std::chrono::seconds(60)); }).detach();
      return in_pid(name);
    };
  };
  bodies[0] = leave_thread("pool");
  bodies[2] = leave_thread("leaver");
  const auto results = run_groups(cases_of(bodies), serial(100));
  EXPECT_EQ(results[0].message, results[1].message);  // the first case's thread is its pool
  EXPECT_EQ(results[1].message, results[2].message);
  EXPECT_NE(results[2].message, results[3].message);
  EXPECT_EQ(results[3].message, results[4].message);  // the fresh worker's first case added none
}

TEST(WorkerReuse, AFailedIntegrityCheckRetiresTheWorker) {
  auto bodies = plain(3);
  bodies[1] = [] {
    CaseResult r = in_pid("wrote late");
    r.checks.push_back({"integrity", Disposition::kFailed, "y changed after the call returned"});
    r.disposition = Disposition::kFailed;
    return r;
  };
  const auto results = run_groups(cases_of(bodies), serial(100));
  EXPECT_EQ(results[0].message, results[1].message);
  EXPECT_NE(results[2].message, results[1].message);
}

// Two workers take cases as they become free; every case runs once, in order in the results.
TEST(WorkerReuse, WorkersTakeCasesAsTheyBecomeFree) {
  std::vector<std::function<CaseResult()>> bodies;
  for (int i = 0; i < 12; ++i) {
    bodies.push_back([i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(i % 3 == 0 ? 60 : 5));
      return in_pid("c" + std::to_string(i));
    });
  }
  IsolateOptions o = serial(100);
  o.jobs = 2;
  const auto results = run_groups(cases_of(bodies), o);
  std::set<std::string> pids;
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(results[i].case_name, "c" + std::to_string(i));
    pids.insert(results[i].message);
  }
  EXPECT_EQ(pids.size(), 2u);
}

}  // namespace
}  // namespace kc
