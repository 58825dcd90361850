// A forked worker and the parent's view of it (run/isolate.cpp schedules them). A worker
// serves one assignment at a time (a case's tasks: its backends) read from its command
// pipe, and sends each result as a frame on its result pipe, then a frame saying whether
// it takes another case ("=ready") or retires ("=retire: why"). It retires after a crash
// of its own code, a failed integrity check, a change in its process state (working
// directory, environment, more threads than it kept after its first case), or once it
// has served IsolateOptions::cases_per_worker cases: a case it serves then starts in a
// process its earlier cases left as they found it (docs/architecture.md, "Workers").
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "run/isolate.h"

namespace kc {

using WorkerClock = std::chrono::steady_clock;

struct Worker {
  enum class Answer { kNone, kReady, kRetire };

  size_t group = 0;
  std::vector<size_t> subs;       // the assigned group's tasks, in order
  size_t at = 0;                  // how many of them delivered their result
  Answer answer = Answer::kNone;  // sent after the assignment's last result
  int served = 0;                 // assignments sent
  pid_t pid = -1;
  int fd = -1;   // results, read here
  int cmd = -1;  // assignments, written here
  std::string out;
  WorkerClock::time_point start;  // of the task at `at`: when the one before it delivered
  bool killed = false;            // by the timeout
  bool eof = false;               // its end of the pipe is closed (it may still run)
  bool exited = false;            // the worker itself was reaped (status holds how it ended)
  bool garbled = false;           // it sent a frame that is not a result
  int status = 0;
  WorkerClock::time_point exited_at;

  bool idle() const { return at == subs.size() && answer == Answer::kReady; }
};

// A task's result when its worker could not give one.
CaseResult died(const IsolatedTask& t, Disposition d, std::string why);

// The task's result, or CRASHED with the exception that escaped it.
CaseResult work_caught(const IsolatedTask& t);

// What a task's code left running, as its result says it.
void name_leftovers(CaseResult& r, int in_group, int left_group);

// Forks a worker that serves groups[] (its copy, made by the fork); `others`: the parent's
// pipe ends of the other workers, which the worker closes. False when it could not start.
bool start_worker(std::vector<IsolatedGroup>& groups, int cases_per_worker, const std::vector<int>& others, Worker& w);

// Sends the worker task list `subs` of group `group`; false when it could not be sent.
bool assign(Worker& w, size_t group, std::vector<size_t> subs);

// Reads what is ready; returns true when the worker's pipe reached end of file.
bool drain(Worker& w);

// Takes every whole result the worker has sent (and its answer after the last); false
// when a frame could not be read.
bool take_results(Worker& w, std::vector<CaseResult>& got);

// Whether the worker is over: it retired or sent what is not a result or too much, it
// exited, or its current task outlived the timeout (then killed). An idle worker is not.
bool over(Worker& w, double timeout);

// The worker's end: killed with its whole group. Returns the result of the task it did
// not finish (or, when every task delivered, an empty label to which what was still
// running is added), and sets `rest` to the tasks it did not start.
CaseResult finish(const IsolatedGroup& g, Worker& w, double timeout, std::vector<size_t>& rest);

}  // namespace kc
