// Forked workers with a pipe each, polled by the parent: a worker that dies by a signal
// is CRASHED, one that outlives its timeout (the parent's clock, whatever the pipe does)
// is killed and TIMEOUT. Each worker leads a process group, killed whole at its end.
#include "run/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "core/fp_env.h"
#include "core/task_threads.h"
#include "run/fd_io.h"
#include "run/process_group.h"

extern char** environ;

namespace kc {
namespace {

using Clock = std::chrono::steady_clock;

struct Worker {
  size_t task = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  Clock::time_point start;
  bool killed = false;  // by the timeout
  bool eof = false;     // its end of the pipe is closed (it may still run)
  bool exited = false;  // the worker itself was reaped (status holds how it ended)
  int status = 0;
  Clock::time_point exited_at;
};

// A result larger than this is not one kcheck's own code writes: the worker is killed.
constexpr size_t kMaxResultBytes = size_t{64} << 20;

// A worker's answer is framed "<length>:<serialized result>", so that the parent knows it
// has the whole result whether or not the pipe is closed (a descendant may hold it open).
std::string frame(const std::string& payload) { return std::to_string(payload.size()) + ":" + payload; }

// The payload once the whole frame has arrived; null before.
const char* framed_payload(const std::string& out, size_t& size) {
  const size_t colon = out.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 20) return nullptr;
  size_t n = 0;
  for (size_t i = 0; i < colon; ++i) {
    if (out[i] < '0' || out[i] > '9') return nullptr;
    n = n * 10 + static_cast<size_t>(out[i] - '0');
    if (n > kMaxResultBytes) return nullptr;  // not a frame kcheck wrote
  }
  if (out.size() < colon + 1 + n) return nullptr;
  size = n;
  return out.data() + colon + 1;
}

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

// What a task run in kcheck's own process (--in-process) may not change for the tasks
// after it or for the report: the working directory, the environment, the floating-point
// environment. Taken before the task, put back after it.
class ProcessState {
 public:
  ProcessState() : cwd_(open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env_.emplace_back(*e);
  }
  ~ProcessState() {
    if (cwd_ >= 0) {
      if (fchdir(cwd_) != 0) std::perror("kcheck: cannot return to the working directory");
      close(cwd_);
    }
    clearenv();
    for (const std::string& kv : env_) {
      const size_t eq = kv.find('=');
      if (eq != std::string::npos && eq > 0) setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
    }
    pin_judge_fp_env();
  }
  ProcessState(const ProcessState&) = delete;
  ProcessState& operator=(const ProcessState&) = delete;

 private:
  int cwd_;
  std::vector<std::string> env_;
};

// In the worker: its own process group, the default signal dispositions (kcheck's own
// handlers are for its process only), the judge's floating-point environment.
[[noreturn]] void child(const IsolatedTask& t, int fd, const std::vector<int>& others) {
  setpgid(0, 0);
  for (int other : others) close(other);  // another case's result is not this one's to read
  for (int sig : {SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) signal(sig, SIG_DFL);
  pin_judge_fp_env();
  _exit(write_all(fd, frame(serialize(work_caught(t)))) ? 0 : 3);
}

std::string how_it_ended(const Worker& w) {
  if (WIFSIGNALED(w.status)) {
    return "worker killed by signal " + std::to_string(WTERMSIG(w.status)) + " (" + strsignal(WTERMSIG(w.status)) + ")";
  }
  return "worker exited with status " + std::to_string(WEXITSTATUS(w.status)) + " without a complete result";
}

// The result from what the worker sent and how it ended; then its whole group is killed.
CaseResult finish(const IsolatedTask& t, Worker& w, double timeout) {
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
  const double secs = std::chrono::duration<double>(Clock::now() - w.start).count();
  CaseResult r;
  size_t size = 0;
  const char* payload = framed_payload(w.out, size);
  if (payload != nullptr && deserialize(std::string(payload, size), r)) {
    // A result that arrived is the verdict, whatever the worker did after sending it.
  } else if (w.killed) {
    char limit[64];
    std::snprintf(limit, sizeof limit, "%g", timeout);
    r = died(t, Disposition::kTimeout, std::string("no result within the timeout of ") + limit + " s; worker killed");
  } else if (w.out.size() > kMaxResultBytes) {
    r = died(t, Disposition::kCrashed,
             "the worker wrote more than " + std::to_string(kMaxResultBytes >> 20) + " MiB to its result pipe; killed");
  } else {
    r = died(t, Disposition::kCrashed, how_it_ended(w));
  }
  if (lingering > 0) {
    r.message += (r.message.empty() ? "" : "; ") + std::to_string(lingering) +
                 " process(es) the backend started were still running when the case ended (killed)";
  }
  r.seconds = secs;
  return r;
}

bool start(const IsolatedTask& t, size_t index, Worker& w, const std::vector<int>& others) {
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
    child(t, fds[1], others);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before it is killed
  close(fds[1]);
  w = Worker{};
  w.task = index;
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

// Whether the worker's task is over: its result arrived whole, it wrote too much, it
// exited (and its pipe closed, or it had its moment to flush), or it outlived the timeout
// (then killed). A pipe closed while the worker runs on is not the end: it may still exit.
bool over(Worker& w, double timeout) {
  size_t size = 0;
  if (framed_payload(w.out, size) != nullptr || w.out.size() > kMaxResultBytes) return true;
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

}  // namespace

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
      if (held_back(i)) continue;
      const ProcessState restored;
      results[i] = work_caught(tasks[i]);
    }
    return results;
  }
  become_subreaper();  // descendants that leave their worker's group come back to be killed
  // Read by the forked workers (the parent runs no task itself).
  set_task_threads(
      std::max(1, task_cores() / std::max<int>(1, std::min<int>(opt.jobs, static_cast<int>(tasks.size())))));
  std::vector<Worker> active;
  while (next < tasks.size() || !active.empty()) {
    while (next < tasks.size() && static_cast<int>(active.size()) < std::max(1, opt.jobs)) {
      Worker w;
      if (held_back(next)) {
        report(next);
      } else if (start(tasks[next], next, w, open_fds(active))) {
        active.push_back(std::move(w));
      } else {
        results[next] = died(tasks[next], Disposition::kCrashed, "could not start a worker process");
        report(next);
      }
      ++next;
    }
    std::vector<pollfd> fds;
    for (const Worker& w : active) fds.push_back({w.eof ? -1 : w.fd, POLLIN, 0});  // -1: not polled
    poll(fds.data(), fds.size(), 50);
    for (size_t k = 0; k < active.size();) {
      Worker& w = active[k];
      if (!w.eof && (fds[k].revents & (POLLIN | POLLHUP | POLLERR))) w.eof = drain(w);
      if (!over(w, opt.timeout_seconds)) {
        ++k;
        continue;
      }
      results[w.task] = finish(tasks[w.task], w, opt.timeout_seconds);
      active.erase(active.begin() + static_cast<long>(k));
      fds.erase(fds.begin() + static_cast<long>(k));
      std::vector<pid_t> keep;
      for (const Worker& other : active) keep.push_back(other.pid);
      if (const int strays = kill_stray_children(keep); strays > 0) {
        results[w.task].message += (results[w.task].message.empty() ? "" : "; ") + std::to_string(strays) +
                                   " process(es) that left the worker's process group were killed";
      }
      report(w.task);
    }
  }
  set_task_threads(0);
  // What strays left behind comes back here as they die: until none is left.
  for (int round = 0; round < 16 && kill_stray_children({}) > 0; ++round) {
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {  // orphans that died after their group was killed
  }
  return results;
}

}  // namespace kc
