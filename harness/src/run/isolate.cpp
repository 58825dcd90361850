// Forked workers with a pipe each, polled by the parent: a worker that dies by a signal
// is CRASHED, one that outlives its timeout is killed and TIMEOUT.
#include "run/isolate.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "run/fd_io.h"

namespace kc {
namespace {

int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::atomic<int> g_task_threads{0};  // 0: one per core

using Clock = std::chrono::steady_clock;

struct Worker {
  size_t task = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  Clock::time_point start;
  bool killed = false;
};

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

[[noreturn]] void child(const IsolatedTask& t, int fd) { _exit(write_all(fd, serialize(work_caught(t))) ? 0 : 3); }

CaseResult finish(const IsolatedTask& t, Worker& w, double timeout) {
  close(w.fd);
  int status = 0;
  waitpid(w.pid, &status, 0);
  const double secs = std::chrono::duration<double>(Clock::now() - w.start).count();
  CaseResult r;
  if (w.killed) {
    char limit[64];
    std::snprintf(limit, sizeof limit, "%g", timeout);
    r = died(t, Disposition::kTimeout, std::string("no result within the timeout of ") + limit + " s; worker killed");
  } else if (WIFSIGNALED(status)) {
    r = died(t, Disposition::kCrashed,
             std::string("worker killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                 strsignal(WTERMSIG(status)) + ")");
  } else if (!deserialize(w.out, r)) {
    r = died(t, Disposition::kCrashed,
             "worker exited with status " + std::to_string(WEXITSTATUS(status)) + " without a complete result");
  }
  r.seconds = secs;
  return r;
}

bool start(const IsolatedTask& t, size_t index, Worker& w) {
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
    child(t, fds[1]);
  }
  close(fds[1]);
  w = Worker{index, pid, fds[0], {}, Clock::now(), false};
  return true;
}

// Reads what is ready; returns true when the worker's pipe reached end of file.
bool drain(Worker& w) {
  char buf[65536];
  const ssize_t n = read(w.fd, buf, sizeof buf);
  if (n > 0) w.out.append(buf, static_cast<size_t>(n));
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

}  // namespace

int task_threads() {
  const int n = g_task_threads.load();
  return n > 0 ? n : cores();
}

std::vector<CaseResult> run_tasks(std::vector<IsolatedTask> tasks, const IsolateOptions& opt) {
  std::vector<CaseResult> results(tasks.size());
  size_t next = 0, done = 0;
  auto report = [&](size_t i) {
    if (opt.observe) opt.observe(results[i]);
    if (opt.progress) opt.progress(++done, tasks.size(), results[i]);
  };
  // Whether the gate holds task i back; its result is then SKIPPED with the reason.
  auto held_back = [&](size_t i) {
    const std::string why = opt.gate ? opt.gate(tasks[i].label) : std::string();
    if (why.empty()) return false;
    results[i] = tasks[i].label;
    results[i].disposition = Disposition::kSkipped;
    results[i].message = why;
    return true;
  };
  if (opt.in_process) {
    for (size_t i = 0; i < tasks.size(); ++i, report(i - 1)) {
      if (!held_back(i)) results[i] = work_caught(tasks[i]);
    }
    return results;
  }
  // Read by the forked workers (the parent runs no task itself).
  g_task_threads = std::max(1, cores() / std::max<int>(1, std::min<int>(opt.jobs, static_cast<int>(tasks.size()))));
  std::vector<Worker> active;
  while (next < tasks.size() || !active.empty()) {
    while (next < tasks.size() && static_cast<int>(active.size()) < std::max(1, opt.jobs)) {
      Worker w;
      if (held_back(next)) {
        report(next);
      } else if (start(tasks[next], next, w)) {
        active.push_back(std::move(w));
      } else {
        results[next] = died(tasks[next], Disposition::kCrashed, "could not start a worker process");
        report(next);
      }
      ++next;
    }
    std::vector<pollfd> fds;
    for (const Worker& w : active) fds.push_back({w.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 50);
    for (size_t k = 0; k < active.size();) {
      Worker& w = active[k];
      const bool eof = (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && drain(w);
      const double age = std::chrono::duration<double>(Clock::now() - w.start).count();
      if (!eof && opt.timeout_seconds > 0 && age > opt.timeout_seconds && !w.killed) {
        kill(w.pid, SIGKILL);
        w.killed = true;
      }
      if (!eof && !w.killed) {
        ++k;
        continue;
      }
      if (w.killed && !eof) {
        while (!drain(w)) {
        }
      }
      results[w.task] = finish(tasks[w.task], w, opt.timeout_seconds);
      report(w.task);
      active.erase(active.begin() + static_cast<long>(k));
      fds.erase(fds.begin() + static_cast<long>(k));
    }
  }
  g_task_threads = 0;
  return results;
}

}  // namespace kc
