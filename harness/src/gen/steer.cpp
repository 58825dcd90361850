// CaseOracleHelper (steer.h): the case goes to the child as its YAML (case_to_yaml,
// which loads back to an equal Case), length-prefixed, over a socket pair; the answer
// comes back as one byte. send() with MSG_NOSIGNAL, so that a dead child is an error
// here rather than a SIGPIPE.
#include "steer.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "kc/case_io.h"

namespace kc::gen::detail {
namespace {

bool send_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Waits up to `seconds` for fd to become readable (or closed).
bool readable(int fd, int seconds) {
  pollfd p{fd, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, seconds * 1000);
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

}  // namespace

CaseOracleHelper::CaseOracleHelper(std::function<int(const Case&)> answer, int seconds)
    : answer_(std::move(answer)), seconds_(seconds) {}

CaseOracleHelper::~CaseOracleHelper() { stop(); }

int CaseOracleHelper::ask(const Case& c) {
  if (owner_ != ::getpid()) {  // never started, or inherited through fork(): not ours to use
    owner_ = -1;
    child_ = -1;
    fd_ = -1;
  }
  if (child_ < 0 && !start()) return answer_(c);
  const std::string text = case_to_yaml(c);
  const uint64_t size = text.size();
  signed char k = -1;
  if (!send_all(fd_, &size, sizeof size) || !send_all(fd_, text.data(), text.size()) || !readable(fd_, seconds_) ||
      !recv_all(fd_, &k, 1)) {
    stop();
    ++restarts_;
    return -1;
  }
  return k;
}

bool CaseOracleHelper::start() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return false;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    serve(fds[1]);
  }
  ::close(fds[1]);
  owner_ = ::getpid();
  child_ = pid;
  fd_ = fds[0];
  return true;
}

void CaseOracleHelper::stop() {
  if (child_ < 0 || owner_ != ::getpid()) return;
  ::close(fd_);  // a waiting child reads the end of its input and leaves
  ::kill(child_, SIGKILL);
  while (::waitpid(child_, nullptr, 0) < 0 && errno == EINTR) {
  }
  child_ = -1;
  fd_ = -1;
}

void CaseOracleHelper::serve(int fd) const {
  std::string text;
  for (;;) {
    uint64_t size = 0;
    if (!recv_all(fd, &size, sizeof size) || size > (uint64_t{1} << 30)) ::_exit(0);
    text.resize(size);
    if (!recv_all(fd, text.data(), size)) ::_exit(0);
    int k = -1;
    const std::vector<LoadedCase> cases = parse_cases(text, "<generated case>");
    if (cases.size() == 1 && cases.front().c.ok()) k = answer_(*cases.front().c);
    const signed char byte = static_cast<signed char>(k);
    if (!send_all(fd, &byte, 1)) ::_exit(0);
  }
}

}  // namespace kc::gen::detail
