// The worker's side of run/isolate.cpp (its loop over assignments, the rule by which it
// retires) and the parent's reading of its pipes. Frames: run/result_frame.h.
#include "run/worker.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>

#include "core/fp_env.h"
#include "core/task_threads.h"
#include "run/fd_io.h"
#include "run/process_group.h"
#include "run/result_frame.h"

extern char** environ;

namespace kc {
namespace {

// How long a worker that exited may still be read from (its last bytes in the pipe).
constexpr double kAfterExitSeconds = 0.2;

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return 0;
}

// What a case may not leave changed for the next case the worker serves.
struct Baseline {
  dev_t dev = 0;
  ino_t ino = 0;
  std::vector<std::string> env;
  int threads = -1;  // after the first case: libraries make their thread pools on first use

  void take_cwd_and_env() {
    struct stat st {};
    if (stat(".", &st) == 0) {
      dev = st.st_dev;
      ino = st.st_ino;
    }
    env.clear();
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  }

  // Why the process is no longer as the worker's first case left it, or empty.
  std::string changed() {
    const Baseline before = *this;
    take_cwd_and_env();
    if (dev != before.dev || ino != before.ino) return "its working directory changed";
    if (env != before.env) return "its environment changed";
    const int now = thread_count();
    if (before.threads >= 0 && now > before.threads) {
      return "it runs " + std::to_string(now) + " threads, " + std::to_string(before.threads) + " after its first case";
    }
    threads = std::max(threads, now);
    return {};
  }
};

// A result after which the worker is not trusted with another case.
bool spoils_worker(const CaseResult& r) {
  if (r.disposition == Disposition::kCrashed || r.disposition == Disposition::kTimeout) return true;
  return std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) {
    return c.name == "integrity" && c.disposition == Disposition::kFailed;
  });
}

// One line "group task task ..." from the command pipe; false at its end.
bool read_assignment(int fd, std::string& pending, size_t& group, std::vector<size_t>& subs) {
  size_t nl;
  while ((nl = pending.find('\n')) == std::string::npos) {
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending.append(buf, static_cast<size_t>(n));
  }
  std::istringstream line(pending.substr(0, nl));
  pending.erase(0, nl + 1);
  subs.clear();
  if (!(line >> group)) return false;
  for (size_t k; line >> k;) subs.push_back(k);
  return true;
}

// The tasks of one assignment, each result sent as it is made; whether one spoiled the worker.
bool serve(IsolatedGroup& g, const std::vector<size_t>& subs, int fd) {
  bool spoiled = false;
  for (const size_t k : subs) {
    if (k >= g.tasks.size()) _exit(4);
    pin_judge_fp_env();
    CaseResult r = work_caught(g.tasks[k]);
    const KilledDescendants left = kill_descendants(getpgrp());
    name_leftovers(r, left.in_group, left.left_group);
    spoiled = spoiled || spoils_worker(r);
    if (!write_all(fd, frame(serialize(r)))) _exit(3);
  }
  for (IsolatedTask& t : g.tasks) t.work = nullptr;  // what the case shared (its oracle memo) is let go
  return spoiled;
}

// In the worker: its own process group, the reaper of what its tasks leave, the default
// signal dispositions (kcheck's own handlers are for its process only), the judge's
// floating-point environment before each task.
[[noreturn]] void worker_main(std::vector<IsolatedGroup>& groups, int cases_per_worker, int cmd, int fd,
                              const std::vector<int>& others) {
  setpgid(0, 0);
  for (int other : others) close(other);  // another case's result is not this one's to read
  for (int sig : {SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) signal(sig, SIG_DFL);
  become_subreaper();
  limit_openmp_threads(task_threads());
  Baseline base;
  base.take_cwd_and_env();
  std::string pending;
  size_t group = 0;
  std::vector<size_t> subs;
  for (int served = 1; read_assignment(cmd, pending, group, subs); ++served) {
    if (group >= groups.size()) _exit(4);
    std::string why = serve(groups[group], subs, fd) ? "a task crashed, timed out or failed integrity" : "";
    if (why.empty()) why = base.changed();
    if (why.empty() && served >= cases_per_worker) why = "served " + std::to_string(served) + " case(s)";
    if (!write_all(fd, frame(why.empty() ? "=ready" : "=retire: " + why))) _exit(3);
    if (!why.empty()) _exit(0);
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

}  // namespace

CaseResult died(const IsolatedTask& t, Disposition d, std::string why) {
  CaseResult r = t.label;
  r.disposition = d;
  r.message = std::move(why);
  return r;
}

// A backend's code outside the checks' own catch (its name(), say) must not end kcheck
// when run in process, nor a worker by std::terminate.
CaseResult work_caught(const IsolatedTask& t) {
  try {
    return t.work();
  } catch (const std::exception& e) {
    return died(t, Disposition::kCrashed, std::string("exception: ") + e.what());
  } catch (...) {
    return died(t, Disposition::kCrashed, "exception of a non-standard type");
  }
}

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

bool start_worker(std::vector<IsolatedGroup>& groups, int cases_per_worker, const std::vector<int>& others, Worker& w) {
  int res[2], cmd[2];
  if (pipe(res) != 0) return false;
  if (pipe(cmd) != 0) {
    close(res[0]);
    close(res[1]);
    return false;
  }
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) {
    for (int f : {res[0], res[1], cmd[0], cmd[1]}) close(f);
    return false;
  }
  if (pid == 0) {
    close(res[0]);
    close(cmd[1]);
    worker_main(groups, cases_per_worker, cmd[0], res[1], others);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before it is killed
  close(res[1]);
  close(cmd[0]);
  w = Worker{};
  w.pid = pid;
  w.fd = res[0];
  w.cmd = cmd[1];
  return true;
}

bool assign(Worker& w, size_t group, std::vector<size_t> subs) {
  std::string line = std::to_string(group);
  for (size_t k : subs) line.append(" ").append(std::to_string(k));
  line.push_back('\n');
  w.group = group;
  w.subs = std::move(subs);
  w.at = 0;
  w.answer = Worker::Answer::kNone;
  w.start = WorkerClock::now();
  ++w.served;
  return write_all(w.cmd, line);  // SIGPIPE is ignored while workers run (run_groups)
}

bool drain(Worker& w) {
  char buf[65536];
  const ssize_t n = read(w.fd, buf, sizeof buf);
  if (n > 0 && w.out.size() <= kMaxResultBytes) w.out.append(buf, static_cast<size_t>(n));
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

bool take_results(Worker& w, std::vector<CaseResult>& got) {
  size_t size = 0;
  while (w.answer == Worker::Answer::kNone) {
    const char* payload = framed_payload(w.out, size);
    if (payload == nullptr) {
      if (frame_broken(w.out)) return false;
      break;
    }
    const std::string text(payload, size);
    w.out.erase(0, static_cast<size_t>(payload - w.out.data()) + size);
    if (w.at + got.size() == w.subs.size()) {  // the answer after the assignment's last result
      if (text == "=ready") {
        w.answer = Worker::Answer::kReady;
      } else if (text.rfind("=retire", 0) == 0) {
        w.answer = Worker::Answer::kRetire;
      } else {
        return false;
      }
      continue;
    }
    CaseResult r;
    if (!deserialize(text, r)) return false;
    got.push_back(std::move(r));
  }
  return w.answer == Worker::Answer::kNone || w.out.empty();  // nothing may follow the answer
}

bool over(Worker& w, double timeout) {
  if (w.answer == Worker::Answer::kRetire || w.garbled || w.out.size() > kMaxResultBytes) return true;
  const auto now = WorkerClock::now();
  if (!w.exited && waitpid(w.pid, &w.status, WNOHANG) == w.pid) {
    w.exited = true;
    w.exited_at = now;
  }
  const double since_exit = std::chrono::duration<double>(now - w.exited_at).count();
  if (w.exited && (w.eof || since_exit > kAfterExitSeconds)) return true;
  if (w.idle()) return false;  // waiting for its next case, on no clock
  if (timeout > 0 && std::chrono::duration<double>(now - w.start).count() > timeout) {
    w.killed = true;
    return true;
  }
  return false;
}

CaseResult finish(const IsolatedGroup& g, Worker& w, double timeout, std::vector<size_t>& rest) {
  close(w.fd);
  if (w.cmd >= 0) close(w.cmd);
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
    r.seconds = std::chrono::duration<double>(WorkerClock::now() - w.start).count();
    rest.assign(w.subs.begin() + static_cast<long>(w.at) + 1, w.subs.end());
  } else if (!w.subs.empty() && w.answer == Worker::Answer::kNone) {  // died in the case's cleanup
    r.message = w.killed ? "the worker did not finish the case's cleanup within the timeout; killed"
                         : how_it_ended(w) + " in the case's cleanup, after its last result";
  }
  name_leftovers(r, lingering, 0);
  return r;
}

}  // namespace kc
