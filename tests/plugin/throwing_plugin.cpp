// A plugin whose kc_register_backends throws (a std::exception, or with
// KC_THROW_NON_STANDARD an int): kcheck must name the library and the exception and
// exit 2, not end in std::terminate.
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

}  // namespace

KC_PLUGIN(register_nothing)
