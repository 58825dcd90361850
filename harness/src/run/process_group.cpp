// process_group.h on Linux (prctl, /proc), and what POSIX alone allows elsewhere.
#include "run/process_group.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace kc {
namespace {

struct ProcStat {
  pid_t pid = 0, ppid = 0, pgrp = 0;
};

// Every process /proc lists, with its parent and group (none off Linux).
std::vector<ProcStat> processes() {
  std::vector<ProcStat> out;
#if defined(__linux__)
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const std::string path = std::string("/proc/") + e->d_name + "/stat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) continue;
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the last ')'.
    const char* close = nullptr;
    for (const char* p = buf; *p; ++p) close = *p == ')' ? p : close;
    ProcStat s;
    s.pid = pid;
    char state = 0;
    if (close == nullptr || std::sscanf(close + 1, " %c %d %d", &state, &s.ppid, &s.pgrp) != 3) continue;
    if (state != 'Z') out.push_back(s);  // a zombie runs nothing: it waits to be reaped
  }
  closedir(d);
#endif
  return out;
}

// The children of this process: /proc/self/task/*/children (one small read per thread),
// or, where the kernel does not offer it, every process's parent from /proc.
std::vector<pid_t> own_children() {
  std::vector<pid_t> kids;
#if defined(__linux__)
  bool listed = false;
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::FILE* f = std::fopen((std::string("/proc/self/task/") + e->d_name + "/children").c_str(), "r");
      if (f == nullptr) continue;
      listed = true;
      for (int pid = 0; std::fscanf(f, "%d", &pid) == 1;) kids.push_back(static_cast<pid_t>(pid));
      std::fclose(f);
    }
    closedir(d);
  }
  if (listed) return kids;
#endif
  const pid_t self = getpid();
  for (const ProcStat& p : processes()) {
    if (p.ppid == self) kids.push_back(p.pid);
  }
  return kids;
}

}  // namespace

bool become_subreaper() {
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
  return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
#else
  return false;
#endif
}

int group_members(pid_t pgid, pid_t except) {
  int n = 0;
  for (const ProcStat& p : processes()) n += p.pgrp == pgid && p.pid != except;
  return n;
}

bool reap(pid_t pid, int* status, double seconds) {
  for (int waited_ms = 0;; ++waited_ms) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return r == pid;
    if (waited_ms >= seconds * 1000) return false;
    usleep(1000);
  }
}

void kill_group(pid_t pgid) {
  if (pgid <= 1) return;
  kill(-pgid, SIGKILL);
  // Its members that are this process's children (reparented here) are reaped as they die,
  // for a bounded time: a process in uninterruptible sleep must not hang the run.
  for (int waited_ms = 0; waited_ms < 2000; ++waited_ms) {
    while (waitpid(-pgid, nullptr, WNOHANG) > 0) {
    }
    if (kill(-pgid, 0) != 0) return;
    usleep(1000);
  }
}

int kill_stray_children(const std::vector<pid_t>& keep) {
  int n = 0;
  auto kept = [&keep](pid_t p) { return std::find(keep.begin(), keep.end(), p) != keep.end(); };
  for (const pid_t pid : own_children()) {
    // An active worker, or a process still in its group (a running case's, reparented here
    // by a double fork), is not a stray: its case's end deals with it.
    if (kept(pid) || kept(getpgid(pid))) continue;
    if (waitpid(pid, nullptr, WNOHANG) == pid) continue;  // it had ended: reaped, nothing to kill
    kill(pid, SIGKILL);
    reap(pid, nullptr, 2.0);
    ++n;
  }
  return n;
}

KilledDescendants kill_descendants(pid_t group) {
  KilledDescendants k;
  for (int round = 0; round < 16; ++round) {
    const std::vector<pid_t> kids = own_children();
    if (kids.empty()) break;
    for (const pid_t pid : kids) {
      const bool stayed = getpgid(pid) == group;
      if (waitpid(pid, nullptr, WNOHANG) == pid) continue;  // it had ended: reaped, nothing to kill
      kill(pid, SIGKILL);
      reap(pid, nullptr, 2.0);
      ++(stayed ? k.in_group : k.left_group);
    }
  }
  return k;
}

}  // namespace kc
