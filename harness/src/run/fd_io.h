// Writing a whole buffer to a file descriptor: how a forked child (a kcheck worker, the
// GPU device probe) hands its answer to the parent over a pipe. write() may write less
// than asked, so it loops.
#pragma once

#include <unistd.h>

#include <string_view>

namespace kc {

// True when every byte was written.
inline bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace kc
