// probe_device(): the device query in a forked child, so that the calling process never
// initialises CUDA (kcheck's parent must stay fork-safe for its GPU workers). The child
// writes one line per field to a pipe and exits without tearing CUDA down.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>

#include "kc/gpu/device.h"
#include "kc/gpu/device_buffer.h"
#include "run/fd_io.h"

#ifndef KC_CUDA_MIN_ARCH
#define KC_CUDA_MIN_ARCH 90
#endif

namespace kc::gpu {
namespace {

constexpr int kProbeTimeoutMs = 60000;

std::string encode(const StatusOr<DeviceInfo>& r) {
  std::ostringstream os;
  if (!r.ok()) {
    os << "error\n" << r.status().message() << "\n";
    return os.str();
  }
  os << "ok\n"
     << r->name << "\n"
     << r->cc_major << " " << r->cc_minor << " " << r->global_memory_bytes << " " << r->driver_version << " "
     << r->runtime_version << "\n";
  return os.str();
}

StatusOr<DeviceInfo> decode(const std::string& text) {
  std::istringstream is(text);
  std::string tag, line;
  std::getline(is, tag);
  std::getline(is, line);
  if (tag == "error") return unavailable(line);
  DeviceInfo info;
  info.name = line;
  if (tag != "ok" || !(is >> info.cc_major >> info.cc_minor >> info.global_memory_bytes >> info.driver_version >>
                       info.runtime_version)) {
    return unavailable("the device probe process returned no result");
  }
  return info;
}

[[noreturn]] void probe_child(int fd) { _exit(write_all(fd, encode(query_device())) ? 0 : 3); }

// Reads the child's answer until EOF or the timeout; kills it on timeout.
StatusOr<DeviceInfo> collect(pid_t pid, int fd) {
  std::string out;
  char buf[512];
  bool timed_out = false;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, kProbeTimeoutMs);
    if (r == 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (r < 0) break;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) return unavailable("the CUDA device probe did not answer within 60 s");
  if (WIFSIGNALED(status)) {
    return unavailable(std::string("the CUDA device probe died with signal ") + strsignal(WTERMSIG(status)));
  }
  return decode(out);
}

StatusOr<DeviceInfo> probe_in_child() {
  int fds[2];
  if (pipe(fds) != 0) return unavailable(std::string("device probe: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return unavailable(std::string("device probe: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    probe_child(fds[1]);
  }
  close(fds[1]);
  return collect(pid, fds[0]);
}

StatusOr<DeviceInfo> checked(StatusOr<DeviceInfo> r) {
  if (!r.ok()) return r;
  const int cc = r->cc_major * 10 + r->cc_minor;
  if (cc < min_compute_capability()) {
    return unavailable(r->name + " has compute capability " + std::to_string(r->cc_major) + "." +
                       std::to_string(r->cc_minor) + "; this build has code for sm_" +
                       std::to_string(min_compute_capability()) + " and newer only");
  }
  return r;
}

}  // namespace

int min_compute_capability() { return KC_CUDA_MIN_ARCH; }

StatusOr<DeviceInfo> probe_device() {
  static std::once_flag once;
  static StatusOr<DeviceInfo> result = unavailable("not probed");
  std::call_once(once, [] { result = checked(cuda_initialised_here() ? query_device() : probe_in_child()); });
  return result;
}

std::string describe(const DeviceInfo& info) {
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", static_cast<double>(info.global_memory_bytes) / (1 << 30));
  return info.name + " (sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor) + ", " + mem +
         ", driver " + std::to_string(info.driver_version) + ", runtime " + std::to_string(info.runtime_version) + ")";
}

}  // namespace kc::gpu
