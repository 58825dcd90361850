// The frame of a worker's result on its pipe (run/isolate.cpp): "<length>:<serialized
// result>", so that the parent knows it has a whole result whether or not the pipe is
// closed (a descendant may hold it open), and can take several from one pipe in turn.
#pragma once

#include <cstddef>
#include <string>

namespace kc {

// A result larger than this is not one kcheck's own code writes: the worker is killed.
inline constexpr size_t kMaxResultBytes = size_t{64} << 20;

inline std::string frame(const std::string& payload) { return std::to_string(payload.size()) + ":" + payload; }

// The payload once the whole frame has arrived; null before.
inline const char* framed_payload(const std::string& out, size_t& size) {
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

// Whether `out` cannot be the start of a frame (another writer's bytes on the pipe): a
// worker waiting for its next case would otherwise be waited for until its timeout.
inline bool frame_broken(const std::string& out) {
  for (size_t i = 0; i < out.size() && i <= 20; ++i) {
    if (out[i] == ':') return i == 0;
    if (out[i] < '0' || out[i] > '9') return true;
  }
  return out.size() > 20;
}

}  // namespace kc
