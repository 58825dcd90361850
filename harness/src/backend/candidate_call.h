// Every call into a backend's op code goes through candidate_call(): the call runs in the
// backend's own floating-point environment (the one its library left when it loaded, or
// the judge's), and the judge's is pinned again when it returns, so that nothing a
// candidate does to the environment reaches the oracle or the checks. A call that leaves
// the environment other than it found it is noted in the innermost FpLeakWatch of the
// thread; the runner reports it under integrity (docs/checks.md).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/fp_env.h"
#include "kc/backend.h"

namespace kc {

// The environment the calls of `backend` run in: what load_plugin recorded for it, else
// the judge's. Set before workers are forked (they inherit the table).
void set_candidate_fp_env(const std::string& backend, const FpEnv& env);
FpEnv candidate_fp_env(const std::string& backend);

// Collects, on this thread while it lives, what calls left changed ("conv_forward left
// FTZ/DAZ set"), each once. Scopes nest; an inner one passes what it saw outwards.
class FpLeakWatch {
 public:
  FpLeakWatch();
  ~FpLeakWatch();
  FpLeakWatch(const FpLeakWatch&) = delete;
  FpLeakWatch& operator=(const FpLeakWatch&) = delete;
  const std::vector<std::string>& seen() const { return seen_; }
  void add(const std::string& leak);

 private:
  FpLeakWatch* outer_;
  std::vector<std::string> seen_;
};

// Messages a backend returns are kept to this many bytes; the rest is cut, and counted.
inline constexpr size_t kMaxBackendMessage = 4096;
// s with its message cut to kMaxBackendMessage bytes and "... [N bytes cut]" added.
Status cut_message(Status s);
// The same for any text a backend made (an exception's what()).
std::string cut_text(std::string text);

namespace detail {
FpEnv enter_candidate(const Backend& backend);
void leave_candidate(const char* call, const FpEnv& given);
}  // namespace detail

// Runs `call` (a backend's op, available() or supports()) in the backend's environment,
// then pins the judge's and notes a change the call left; a Status it returns comes back
// with its message cut (cut_message).
template <class Call>
auto candidate_call(const Backend& backend, const char* what, Call&& call) {
  const FpEnv given = detail::enter_candidate(backend);
  struct Leave {
    const char* what;
    const FpEnv& given;
    ~Leave() { detail::leave_candidate(what, given); }
  } leave{what, given};
  using Result = decltype(call());
  if constexpr (std::is_void_v<Result>) {
    std::forward<Call>(call)();
  } else if constexpr (std::is_same_v<Result, Status>) {
    return cut_message(std::forward<Call>(call)());
  } else {
    return std::forward<Call>(call)();
  }
}

}  // namespace kc
