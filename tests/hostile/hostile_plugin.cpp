// kc_hostile: backends that do, inside their calls, what a plugin kcheck does not control
// may do: end or hang the process, fork, keep writing after returning, change the
// floating-point environment, return huge messages, change the process's state. Each is
// the reference plus one behaviour, named hostile.<behaviour>; hostile.cmake runs each and
// asserts its disposition and kcheck's exit status. HOSTILE_DIR (set by the test) is where
// a backend writes the pids of the processes it started, so that the test can prove them
// gone.
#include <fenv.h>
#include <signal.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "kc/plugin.h"
#include "support/delegating_backend.h"

namespace kc::test {
namespace {

enum class Act {
  kNone,
  kSegfault,
  kKillSelf,
  kThrow,
  kExit0,
  kHang,
  kForkHold,
  kSetsidEscape,
  kLateWrite,
  kFtzLeak,
  kRoundLeak,
  kHugeMessage,
  kSetLimits,
  kChdir,
  kGarbageFds,
  kStackOverflow
};

// Records a started process's pid in $HOSTILE_DIR/pids (one per line).
void record_pid(pid_t pid) {
  const char* dir = std::getenv("HOSTILE_DIR");
  if (dir == nullptr) return;
  if (std::FILE* f = std::fopen((std::string(dir) + "/pids").c_str(), "a")) {
    std::fprintf(f, "%d\n", static_cast<int>(pid));
    std::fclose(f);
  }
}

// A child that outlives the call: it holds every descriptor the worker has (the result
// pipe among them) and sleeps; with `escape`, it first leaves the worker's process group.
void spawn_lingering(bool escape) {
  int ready[2];
  if (pipe(ready) != 0) return;
  if (fork() == 0) {
    if (escape) setsid();
    record_pid(getpid());
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  char c;
  (void)!read(ready[0], &c, 1);  // it is recorded (and, escaping, out of the group) before the call returns
  close(ready[0]);
  close(ready[1]);
}

volatile bool g_never = false;  // keeps the compiler from proving the recursion endless

int recurse(int n) {
  if (g_never) return n;
  volatile char pad[4096];
  pad[0] = static_cast<char>(n);
  return recurse(n + 1) + pad[0];
}

class Hostile final : public DelegatingBackend {
 public:
  Hostile(std::string name, Act act) : DelegatingBackend(std::move(name)), act_(act) {}

  Status supports(const Case& c) const override {
    if (act_ == Act::kSetLimits) setenv("KC_MAX_CASE_BYTES", "1", 1);  // read once, before: no effect
    return DelegatingBackend::supports(c);
  }

  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(before());
    KC_RETURN_IF_ERROR(DelegatingBackend::conv_forward(g, x, w, b, relu, y));
    return after(y);
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    KC_RETURN_IF_ERROR(before());
    KC_RETURN_IF_ERROR(DelegatingBackend::maxpool_forward(g, x, y, indices));
    return after(y);
  }

 private:
  // What the call does before computing: end, hang or corrupt the process.
  Status before() const {
    if (late_ != nullptr && !late_written_) {  // kLateWrite: this is a later call
      for (size_t i = 0; i < late_size_; ++i) late_[i] = 0.0;
      late_written_ = true;
    }
    switch (act_) {
      case Act::kSegfault:
        raise(SIGSEGV);
        break;
      case Act::kKillSelf:
        kill(getpid(), SIGTERM);
        pause();
        break;
      case Act::kThrow:
        throw std::runtime_error("hostile: thrown from conv_forward");
      case Act::kExit0:
        std::exit(0);
      case Act::kHang:
        signal(SIGTERM, SIG_IGN);
        for (;;) pause();
      case Act::kStackOverflow:
        return recurse(0) != 0 ? ok_status() : internal_error("unreachable");
      case Act::kChdir:
        return chdir("/") == 0 ? ok_status() : internal_error("chdir failed");
      case Act::kGarbageFds:
        for (int fd = 3; fd < 64; ++fd) (void)!write(fd, "garbage\n", 8);
        break;
      case Act::kHugeMessage:
        return internal_error(std::string(1 << 20, 'm'));
      default:
        break;
    }
    return ok_status();
  }

  // What the call does after computing y correctly.
  Status after(Tensor& y) {
    switch (act_) {
      case Act::kForkHold:
        spawn_lingering(false);
        break;
      case Act::kSetsidEscape:
        spawn_lingering(true);
        break;
      case Act::kLateWrite:
        // The first call's y is written again during a later call, as a thread that outlived
        // its call would (timed by the harness's next call, so the test does not race it).
        if (late_ == nullptr) {
          late_ = y.data.data();
          late_size_ = y.data.size();
        }
        break;
      case Act::kFtzLeak:
        _mm_setcsr(_mm_getcsr() | 0x8040);
        break;  // FTZ and DAZ, never cleared
      case Act::kRoundLeak:
        fesetround(FE_UPWARD);
        break;
      default:
        break;
    }
    return ok_status();
  }

  Act act_;
  // kLateWrite: the y of the first call, written once during the next one.
  mutable double* late_ = nullptr;
  mutable size_t late_size_ = 0;
  mutable bool late_written_ = false;
};

void register_all(Registry& r) {
  static const std::pair<const char*, Act> kActs[] = {{"control", Act::kNone},
                                                      {"segfault", Act::kSegfault},
                                                      {"kill_self", Act::kKillSelf},
                                                      {"throw", Act::kThrow},
                                                      {"exit0", Act::kExit0},
                                                      {"hang", Act::kHang},
                                                      {"fork_hold", Act::kForkHold},
                                                      {"setsid", Act::kSetsidEscape},
                                                      {"late_write", Act::kLateWrite},
                                                      {"ftz_leak", Act::kFtzLeak},
                                                      {"round_leak", Act::kRoundLeak},
                                                      {"huge_message", Act::kHugeMessage},
                                                      {"set_limits", Act::kSetLimits},
                                                      {"chdir", Act::kChdir},
                                                      {"garbage_fds", Act::kGarbageFds},
                                                      {"stack_overflow", Act::kStackOverflow}};
  for (const auto& [name, act] : kActs) {
    const std::string full = std::string("hostile.") + name;
    (void)r.add(full, [full, act = act] { return std::make_unique<Hostile>(full, act); });
  }
}

}  // namespace
}  // namespace kc::test

KC_PLUGIN(kc::test::register_all)
