// probe_plugin: fork (run_probe_child), load and ask in the child, which reports each stage on a pipe before
// it enters it, so that the parent can say where the child ended.
#include "backend/plugin_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "kc/plugin.h"
#include "kc/registry.h"

namespace kc {
namespace {

int g_report_fd = -1;

// The whole line and a newline, however write() splits it.
bool write_line(int fd, const std::string& line) {
  const std::string bytes = line + "\n";
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// In the child: every line written before the stage it names starts, "error:" and a
// message for a refusal, "done" at the end. Its stdout goes nowhere (the parent loads the
// library again, and what it prints is printed then); its stderr stays, for the last
// words of a library that ends the process (kcheck's own terminate handler among them).
[[noreturn]] void probe_child(const std::string& path, int fd) {
  for (int sig : {SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
  if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDOUT_FILENO);
  g_report_fd = fd;
  auto say = [fd](const std::string& line) { write_line(fd, line); };
  say("stage:loading the library (its static initializers) and calling kc_register_backends");
  Registry reg;
  if (Status s = load_plugin_here(path, reg); !s.ok()) {
    std::string msg = s.message();
    for (char& c : msg) c = c == '\n' ? ' ' : c;
    say("error:" + msg);
    _exit(0);
  }
  // An exception out of these is the parent's to name (kcheck backends lists the backend
  // as unavailable with it): here it only must not end the probe.
  auto ask = [](auto&& call) {
    try {
      call();
    } catch (...) {
    }
  };
  for (const std::string& name : reg.names()) {
    say("stage:making backend " + name + " (its factory)");
    std::unique_ptr<Backend> b;
    ask([&] { b = reg.make(name); });
    if (!b) continue;
    say("stage:calling " + name + "'s available()");
    ask([&] { (void)b->available(); });
    say("stage:calling " + name + "'s numerics()");
    ask([&] { (void)b->numerics(); });
    say("stage:calling " + name + "'s name()");
    ask([&] { (void)b->name(); });
  }
  say("done");
  _exit(0);
}

// The last complete "stage:" line of `out`, or the first stage when none arrived.
std::string last_stage(const std::string& out) {
  std::string stage = "starting";
  size_t at = 0;
  for (size_t nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1) {
    if (out.compare(at, 6, "stage:") == 0) stage = out.substr(at + 6, nl - at - 6);
  }
  return stage;
}

}  // namespace

bool report_to_probe(const std::string& line) { return g_report_fd >= 0 && write_line(g_report_fd, line); }

std::string how_child_ended(int status) {
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

ProbeOutput run_probe_child(const std::function<void(int fd)>& child, double timeout_seconds,
                            const std::function<bool(const std::string& out)>& finished, bool own_group) {
  ProbeOutput r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.error = "cannot make a pipe to probe it";
    return r;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    r.error = "cannot start a process to probe it";
    return r;
  }
  if (pid == 0) {
    close(fds[0]);
    if (own_group) setpgid(0, 0);
    child(fds[1]);
    _exit(0);
  }
  if (own_group) setpgid(pid, pid);
  close(fds[1]);
  const auto start = std::chrono::steady_clock::now();
  bool ended = false;
  for (;;) {
    const double left =
        timeout_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min(left, 0.25) * 1000) + 1) <= 0) {
      // Ended with nothing more to say (a descendant may hold the pipe open): no deadline to wait for.
      if (!ended && waitpid(pid, &r.status, WNOHANG) == pid) ended = true;
      if (ended) break;
      continue;
    }
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    if (r.out.size() < (1u << 20)) r.out.append(buf, static_cast<size_t>(n));
    if (finished(r.out)) break;
  }
  close(fds[0]);
  kill(own_group ? -pid : pid, SIGKILL);
  if (!ended) waitpid(pid, &r.status, 0);
  while (own_group && waitpid(-pid, nullptr, WNOHANG) > 0) {
  }
  return r;
}

Status probe_plugin(const std::string& path, double timeout_seconds) {
  auto finished = [](const std::string& out) {
    const size_t error = out.find("error:");
    return out.find("\ndone\n") != std::string::npos ||
           (error != std::string::npos && out.find('\n', error) != std::string::npos);
  };
  const ProbeOutput r = run_probe_child([&](int fd) { probe_child(path, fd); }, timeout_seconds, finished, true);
  if (!r.error.empty()) return internal_error("--plugin " + path + ": " + r.error);
  const std::string& out = r.out;
  if (const size_t e = out.find("error:"); e != std::string::npos) {
    return failed_precondition(out.substr(e + 6, out.find('\n', e) - e - 6));
  }
  if (out.find("\ndone\n") != std::string::npos) return ok_status();
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", timeout_seconds);
  const std::string what =
      r.timed_out ? std::string("did not finish within ") + limit + " s" : how_child_ended(r.status);
  return failed_precondition("--plugin " + path + ": the plugin's code " + what + " while " + last_stage(out) +
                             " (in a probe process; a plugin must not end or hang the process that loads it)");
}

}  // namespace kc
