// Plugins that misbehave while kcheck loads or asks them, one library per behaviour,
// built from this file with one HOSTILE_* definition each (tests/hostile/CMakeLists.txt):
//   HOSTILE_INIT_EXIT      a static initializer calls exit(0)
//   HOSTILE_INIT_ABORT     a static initializer aborts
//   HOSTILE_INIT_HANG      a static initializer never returns
//   HOSTILE_AVAILABLE_EXIT a backend's available() calls exit(0)
//   HOSTILE_NAME=<text>    registers a backend under that name (a rule it breaks)
//   HOSTILE_FAST_MATH      (with -ffast-math: crtfastmath sets FTZ/DAZ when it loads) a
//                          correct f32 kernel, whose arithmetic then flushes subnormals
// Without any, it registers a correct f32 kernel: the control of the fast-math one.
#include <unistd.h>

#include <cstdlib>

#include "kc/plugin.h"
#include "support/f32_direct.h"

namespace kc::test {
namespace {

#if defined(HOSTILE_INIT_EXIT)
[[maybe_unused]] const int kInit = (std::exit(0), 0);
#elif defined(HOSTILE_INIT_ABORT)
[[maybe_unused]] const int kInit = (std::abort(), 0);
#elif defined(HOSTILE_INIT_HANG)
[[maybe_unused]] const int kInit = [] {
  for (;;) pause();
  return 0;
}();
#endif

class Loaded final : public DelegatingBackend {
 public:
  explicit Loaded(std::string name) : DelegatingBackend(std::move(name), std::make_unique<F32Direct>()) {}
#if defined(HOSTILE_AVAILABLE_EXIT)
  Status available() const override { std::exit(0); }
#endif
};

void register_all(Registry& r) {
#if defined(HOSTILE_NAME)
  const std::string name = HOSTILE_NAME;
#elif defined(HOSTILE_FAST_MATH)
  const std::string name = "hostile.fast_math";
#else
  const std::string name = "hostile.plain_math";
#endif
  (void)r.add(name, [name] { return std::make_unique<Loaded>(name); });
}

}  // namespace
}  // namespace kc::test

KC_PLUGIN(kc::test::register_all)
