// Running each case on its backends in a worker process (docs/architecture.md, "Data flow"; docs/plugins.md, "Trust"),
// so that a crash or a hang becomes CRASHED or TIMEOUT and the run goes on. Workers are forked: the parent must not
// have initialised CUDA (a CUDA context does not survive fork), which holds for kcheck because only workers touch a
// device.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/task_threads.h"  // task_threads(), which run_tasks sets for its workers
#include "kc/result.h"

namespace kc {

struct IsolatedTask {
  CaseResult label;                  // case name, source, backend: used when the worker dies
  std::function<CaseResult()> work;  // runs in the child
};

// Tasks that run one after another in one worker (a case on each of its backends), so
// that what they compute alike is computed once there (checks/oracle_memo.h). Each task
// has its own timeout, from the moment the one before it delivered its result. A task
// that crashes or times out costs only its own result: the tasks after it start again
// in a fresh worker. What a task's code started and left running is killed before its
// result is sent, and named in it.
struct IsolatedGroup {
  std::vector<IsolatedTask> tasks;
};

struct IsolateOptions {
  int jobs = 1;                // workers at once
  double timeout_seconds = 0;  // per task; 0: none
  bool in_process = false;     // run tasks directly (debugging; no isolation)
  // Called in the parent after each task with (done, total, result).
  std::function<void(size_t, size_t, const CaseResult&)> progress;
  // Called in the parent before a task starts: a reason not to start it (it is then
  // SKIPPED with that reason), or empty. Null: every task starts.
  std::function<std::string(const CaseResult& label)> gate;
  // Called in the parent with each result of a task that ran.
  std::function<void(const CaseResult&)> observe;
  // Cases (groups) a worker serves, one after another, before it is replaced; it is
  // replaced sooner when its process state changed or a task crashed, timed out or failed
  // integrity (run/worker.h). 1: a fresh process per case.
  int cases_per_worker = 1;
};

// Results in task order. Each worker may use cores / jobs threads (task_threads()).
std::vector<CaseResult> run_tasks(std::vector<IsolatedTask> tasks, const IsolateOptions& options);

// As run_tasks, a worker per group: results in order, group after group.
std::vector<CaseResult> run_groups(std::vector<IsolatedGroup> groups, const IsolateOptions& options);

// CaseResult <-> a self-delimiting text form (used over the worker pipe).
std::string serialize(const CaseResult& r);
bool deserialize(const std::string& text, CaseResult& r);

}  // namespace kc
