// Backends from a shared library (docs/plugins.md). A plugin exports
//   extern "C" int kc_register_backends(kc::Registry*, int abi_version);  // 0 on success
//   extern "C" int kc_plugin_abi_version(void);  // optional: KC_PLUGIN_ABI_VERSION it was built with
// which KC_PLUGIN(fn) defines around a function `void fn(kc::Registry&)` (an exception
// fn lets out reaches kcheck, which refuses the plugin naming it). kcheck loads
// it with --plugin lib.so, refuses a library that says it was built for another ABI
// version (before calling into it; without kc_plugin_abi_version the plugin must refuse
// an abi_version it was not built for, as KC_PLUGIN's does), and registers what it adds.
// Bump KC_PLUGIN_ABI_VERSION whenever Backend, Registry, Tensor, the geometries or
// Status change layout or meaning.
#pragma once

#include <string>

#include "kc/registry.h"
#include "kc/status.h"

#define KC_PLUGIN_ABI_VERSION 6

#define KC_PLUGIN(register_fn)                                                   \
  extern "C" int kc_plugin_abi_version(void) { return KC_PLUGIN_ABI_VERSION; }   \
  extern "C" int kc_register_backends(kc::Registry* registry, int abi_version) { \
    if (registry == nullptr || abi_version != KC_PLUGIN_ABI_VERSION) return 1;   \
    register_fn(*registry);                                                      \
    return 0;                                                                    \
  }

namespace kc {

// dlopens `path` and registers its backends into `registry`. Errors name the library
// and say what is wrong: not found / not loadable (dlerror), a missing entry point, an
// ABI version mismatch (both versions), a refusal from the plugin, an exception out of
// its entry points ("kc_register_backends threw: <what()>"), or a backend name that
// clashes with one already registered. An exception out of the library's static
// constructors cannot be caught (dlopen's frames do not pass it on): while dlopen runs,
// a terminate handler names the library and the exception on stderr and ends the
// process with exit code 2 (std::_Exit). Loads are serialized.
//
// The library is first loaded and asked (its factories, available(), numerics()) in a
// child process: an exit, abort, crash, or a hang past `probe_seconds` there is an error
// naming the plugin and the stage, and this process never loads it. The floating-point
// environment its loading left (FTZ/DAZ from -ffast-math) is what its backends' calls run
// in; this process goes back to the judge's.
Status load_plugin(const std::string& path, Registry& registry, double probe_seconds = 60);

// load_plugin without the child: in the probe itself, or where a fork is not wanted.
Status load_plugin_here(const std::string& path, Registry& registry);

}  // namespace kc
