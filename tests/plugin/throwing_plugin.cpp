// A plugin whose kc_register_backends throws (a std::exception, or with
// KC_THROW_NON_STANDARD an int), or with KC_THROW_STATIC whose static constructor throws
// while dlopen runs it: kcheck must name the library and the exception and exit 2, not
// abort in std::terminate.
#include <stdexcept>

#include "kc/plugin.h"

namespace {

void register_nothing(kc::Registry&) {
#ifdef KC_THROW_NON_STANDARD
  throw 42;
#else
  throw std::runtime_error("throwing plugin: cannot register");
#endif
}

#ifdef KC_THROW_STATIC
struct ThrowsWhenLoaded {
  ThrowsWhenLoaded() { throw std::runtime_error("throwing plugin: static constructor failed"); }
};
const ThrowsWhenLoaded throws_when_loaded;
#endif

}  // namespace

KC_PLUGIN(register_nothing)
