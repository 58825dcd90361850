// Forked workers with a pipe each, polled by the parent: a worker that dies by a signal
// is CRASHED, one that outlives its timeout (the parent's clock, whatever the pipe does)
// is killed and TIMEOUT. Each worker leads a process group, killed whole at its end.
#include "run/isolate.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <vector>

#include "core/fp_env.h"
#include "core/task_threads.h"
#include "run/fd_io.h"
#include "run/process_group.h"
#include "run/process_state.h"
#include "run/result_frame.h"

namespace kc {
namespace {

using Clock = std::chrono::steady_clock;

struct Worker {
  size_t group = 0;
  std::vector<size_t> subs;  // the group's tasks this worker runs, in order
  size_t at = 0;             // how many of them delivered their result
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  Clock::time_point start;  // of the task at `at`: when the one before it delivered
  bool killed = false;      // by the timeout
  bool eof = false;         // its end of the pipe is closed (it may still run)
  bool exited = false;      // the worker itself was reaped (status holds how it ended)
  bool garbled = false;     // it sent a frame that is not a result
  int status = 0;
  Clock::time_point exited_at;
};

// How long a worker that exited may still be read from (its last bytes in the pipe).
constexpr double kAfterExitSeconds = 0.2;

CaseResult died(const IsolatedTask& t, Disposition d, std::string why) {
  CaseResult r = t.label;
  r.disposition = d;
  r.message = std::move(why);
  return r;
}

// The task's result, or CRASHED with the exception that escaped it: a backend's code
// outside the checks' own catch (its name(), say) must not end kcheck when run in
// process, nor a worker by std::terminate.
CaseResult work_caught(const IsolatedTask& t) {
  try {
    return t.work();
  } catch (const std::exception& e) {
    return died(t, Disposition::kCrashed, std::string("exception: ") + e.what());
  } catch (...) {
    return died(t, Disposition::kCrashed, "exception of a non-standard type");
  }
}

// What a task's code left running, as its result says it.
void name_leftovers(CaseResult& r, int in_group, int left_group) {
  if (in_group > 0) {
    r.message += (r.message.empty() ? "" : "; ") + std::to_string(in_group) +
                 " process(es) the backend started were still running when the case ended (killed)";
  }
  if (left_group > 0) {
    r.message += (r.message.empty() ? "" : "; ") + std::to_string(left_group) +
                 " process(es) that left the worker's process group were killed";
  }
}

// In the worker: its own process group, the reaper of what its tasks leave, the default
// signal dispositions (kcheck's own handlers are for its process only), the judge's
// floating-point environment before each task. Each result is sent as it is made.
[[noreturn]] void child(const IsolatedGroup& g, const std::vector<size_t>& subs, int fd,
                        const std::vector<int>& others) {
  setpgid(0, 0);
  for (int other : others) close(other);  // another case's result is not this one's to read
  for (int sig : {SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) signal(sig, SIG_DFL);
  become_subreaper();
  limit_openmp_threads(task_threads());
  for (const size_t k : subs) {
    pin_judge_fp_env();
    CaseResult r = work_caught(g.tasks[k]);
    const KilledDescendants left = kill_descendants(getpgrp());
    name_leftovers(r, left.in_group, left.left_group);
    if (!write_all(fd, frame(serialize(r)))) _exit(3);
  }
  _exit(0);
}

std::string how_it_ended(const Worker& w) {
  if (w.garbled) return "the worker sent a result that could not be read; killed";
  if (WIFSIGNALED(w.status)) {
    return "worker killed by signal " + std::to_string(WTERMSIG(w.status)) + " (" + strsignal(WTERMSIG(w.status)) + ")";
  }
  return "worker exited with status " + std::to_string(WEXITSTATUS(w.status)) + " without a complete result";
}

// Takes every whole result the worker has sent; false when one could not be read.
bool take_results(Worker& w, std::vector<CaseResult>& got) {
  size_t size = 0;
  while (w.at + got.size() < w.subs.size()) {
    const char* payload = framed_payload(w.out, size);
    if (payload == nullptr) break;
    CaseResult r;
    if (!deserialize(std::string(payload, size), r)) return false;
    w.out.erase(0, static_cast<size_t>(payload - w.out.data()) + size);
    got.push_back(std::move(r));
  }
  return true;
}

// The worker's end: killed with its whole group. Returns the result of the task it did
// not finish (or, when every task delivered, an empty label to which what was still
// running is added), and sets `rest` to the tasks it did not start.
CaseResult finish(const IsolatedGroup& g, Worker& w, double timeout, std::vector<size_t>& rest) {
  close(w.fd);
  if (!w.exited) {
    kill(w.pid, SIGKILL);
    w.exited = reap(w.pid, &w.status, 5.0);  // a process stuck in the kernel must not hang the run
  }
  // The group outlives its leader only when something the backend started still runs:
  // only then is /proc read to count it, before the whole group is killed.
  while (waitpid(-w.pid, nullptr, WNOHANG) > 0) {
  }
  const int lingering = kill(-w.pid, 0) == 0 ? std::max(1, group_members(w.pid, 0)) : 0;
  if (lingering > 0) kill_group(w.pid);
  CaseResult r;
  if (w.at < w.subs.size()) {
    const IsolatedTask& t = g.tasks[w.subs[w.at]];
    if (w.killed) {
      char limit[64];
      std::snprintf(limit, sizeof limit, "%g", timeout);
      r = died(t, Disposition::kTimeout, std::string("no result within the timeout of ") + limit + " s; worker killed");
    } else if (w.out.size() > kMaxResultBytes) {
      r = died(
          t, Disposition::kCrashed,
          "the worker wrote more than " + std::to_string(kMaxResultBytes >> 20) + " MiB to its result pipe; killed");
    } else {
      r = died(t, Disposition::kCrashed, how_it_ended(w));
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - w.start).count();
    rest.assign(w.subs.begin() + static_cast<long>(w.at) + 1, w.subs.end());
  }
  name_leftovers(r, lingering, 0);
  return r;
}

bool start(const IsolatedGroup& g, size_t group, std::vector<size_t> subs, Worker& w, const std::vector<int>& others) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    child(g, subs, fds[1], others);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before it is killed
  close(fds[1]);
  w = Worker{};
  w.group = group;
  w.subs = std::move(subs);
  w.pid = pid;
  w.fd = fds[0];
  w.start = Clock::now();
  return true;
}

// The read ends of the active workers' pipes, which a new worker closes.
std::vector<int> open_fds(const std::vector<Worker>& active) {
  std::vector<int> fds;
  for (const Worker& w : active) fds.push_back(w.fd);
  return fds;
}

// Reads what is ready; returns true when the worker's pipe reached end of file.
bool drain(Worker& w) {
  char buf[65536];
  const ssize_t n = read(w.fd, buf, sizeof buf);
  if (n > 0 && w.out.size() <= kMaxResultBytes) w.out.append(buf, static_cast<size_t>(n));
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

// Whether the worker is over: every task delivered, it sent what is not a result or too
// much, it exited (and its pipe closed, or it had its moment to flush), or its current
// task outlived the timeout (then killed). A pipe closed while the worker runs on is not
// the end: it may still exit.
bool over(Worker& w, double timeout) {
  if (w.at == w.subs.size() || w.garbled || w.out.size() > kMaxResultBytes) return true;
  const auto now = Clock::now();
  if (!w.exited && waitpid(w.pid, &w.status, WNOHANG) == w.pid) {
    w.exited = true;
    w.exited_at = now;
  }
  const double since_exit = std::chrono::duration<double>(now - w.exited_at).count();
  if (w.exited && (w.eof || since_exit > kAfterExitSeconds)) return true;
  if (timeout > 0 && std::chrono::duration<double>(now - w.start).count() > timeout) {
    w.killed = true;
    return true;
  }
  return false;
}

// The parent's side of a run: workers started as slots free up, their results taken as
// they arrive, the tasks a dead worker did not start queued for a fresh one.
class Scheduler {
 public:
  Scheduler(std::vector<IsolatedGroup>& groups, const IsolateOptions& opt) : groups_(groups), opt_(opt) {
    size_t total = 0;
    for (const IsolatedGroup& g : groups_) {
      offset_.push_back(total);
      total += g.tasks.size();
    }
    results_.resize(total);
    for (size_t i = 0; i < groups_.size(); ++i) {
      std::vector<size_t> all(groups_[i].tasks.size());
      for (size_t k = 0; k < all.size(); ++k) all[k] = k;
      if (!all.empty()) pending_.push_back({i, std::move(all)});
    }
  }

  std::vector<CaseResult> run() {
    while (!pending_.empty() || !active_.empty()) {
      fill_slots();
      poll_workers();
    }
    return std::move(results_);
  }

  std::vector<CaseResult> run_in_process() {
    for (auto& [g, subs] : pending_) {
      for (size_t k : subs) {
        if (held_back(g, k)) continue;
        const ProcessState restored;
        deliver(g, k, work_caught(groups_[g].tasks[k]));
      }
      for (IsolatedTask& t : groups_[g].tasks) t.work = nullptr;  // what the group shared is let go
    }
    return std::move(results_);
  }

 private:
  void deliver(size_t g, size_t k, CaseResult r) {
    CaseResult& slot = results_[offset_[g] + k];
    slot = std::move(r);
    if (opt_.observe) opt_.observe(slot);
    if (opt_.progress) opt_.progress(++done_, results_.size(), slot);
  }

  // Whether the gate holds task k of group g back; its result is then SKIPPED with the reason.
  bool held_back(size_t g, size_t k) {
    const CaseResult& label = groups_[g].tasks[k].label;
    const std::string why = opt_.gate ? opt_.gate(label) : std::string();
    if (why.empty()) return false;
    CaseResult r = label;
    r.disposition = Disposition::kSkipped;
    r.message = why;
    deliver(g, k, std::move(r));
    return true;
  }

  void fill_slots() {
    while (!pending_.empty() && static_cast<int>(active_.size()) < std::max(1, opt_.jobs)) {
      auto [g, subs] = std::move(pending_.front());
      pending_.pop_front();
      std::erase_if(subs, [&](size_t k) { return held_back(g, k); });
      if (subs.empty()) continue;
      Worker w;
      if (start(groups_[g], g, subs, w, open_fds(active_))) {
        active_.push_back(std::move(w));
        continue;
      }
      for (size_t k : subs) {
        deliver(g, k, died(groups_[g].tasks[k], Disposition::kCrashed, "could not start a worker process"));
      }
    }
  }

  void poll_workers() {
    std::vector<pollfd> fds;
    for (const Worker& w : active_) fds.push_back({w.eof ? -1 : w.fd, POLLIN, 0});  // -1: not polled
    poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < active_.size();) {
      Worker& w = active_[i];
      if (!w.eof && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) w.eof = drain(w);
      take(w);
      if (!over(w, opt_.timeout_seconds)) {
        ++i;
        continue;
      }
      end(w);
      active_.erase(active_.begin() + static_cast<long>(i));
      fds.erase(fds.begin() + static_cast<long>(i));
    }
  }

  // The results that arrived, each the verdict of its task whatever the worker does next.
  void take(Worker& w) {
    std::vector<CaseResult> got;
    w.garbled = !take_results(w, got);
    for (CaseResult& r : got) {
      deliver(w.group, w.subs[w.at], std::move(r));
      ++w.at;
      w.start = Clock::now();
    }
  }

  void end(Worker& w) {
    std::vector<size_t> rest;
    CaseResult last = finish(groups_[w.group], w, opt_.timeout_seconds, rest);
    std::vector<pid_t> keep;
    for (const Worker& other : active_) {
      if (other.pid != w.pid) keep.push_back(other.pid);
    }
    const int strays = kill_stray_children(keep);
    name_leftovers(last, 0, strays);
    if (w.at < w.subs.size()) {
      deliver(w.group, w.subs[w.at], std::move(last));
    } else if (!last.message.empty()) {  // what outlived the worker's own cleanup: named on its last result
      CaseResult& r = results_[offset_[w.group] + w.subs.back()];
      r.message += (r.message.empty() ? "" : "; ") + last.message;
    }
    if (!rest.empty()) pending_.push_front({w.group, std::move(rest)});
  }

  std::vector<IsolatedGroup>& groups_;
  const IsolateOptions& opt_;
  std::vector<size_t> offset_;  // of each group's first result
  std::vector<CaseResult> results_;
  std::deque<std::pair<size_t, std::vector<size_t>>> pending_;  // (group, its tasks to start)
  std::vector<Worker> active_;
  size_t done_ = 0;
};

}  // namespace

std::vector<CaseResult> run_groups(std::vector<IsolatedGroup> groups, const IsolateOptions& opt) {
  Scheduler s(groups, opt);
  if (opt.in_process) return s.run_in_process();
  become_subreaper();  // descendants that leave their worker's group come back to be killed
  // Read by the forked workers (the parent runs no task itself).
  const int workers = std::min<int>(std::max(1, opt.jobs), static_cast<int>(std::max<size_t>(1, groups.size())));
  set_task_threads(std::max(1, task_cores() / workers));
  std::vector<CaseResult> results = s.run();
  set_task_threads(0);
  // What strays left behind comes back here as they die: until none is left.
  for (int round = 0; round < 16 && kill_stray_children({}) > 0; ++round) {
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {  // orphans that died after their group was killed
  }
  return results;
}

std::vector<CaseResult> run_tasks(std::vector<IsolatedTask> tasks, const IsolateOptions& opt) {
  std::vector<IsolatedGroup> groups;
  groups.reserve(tasks.size());
  for (IsolatedTask& t : tasks) groups.push_back({{std::move(t)}});
  return run_groups(std::move(groups), opt);
}

}  // namespace kc
