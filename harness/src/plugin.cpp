// Plugin loading: dlopen, the ABI-version check (when the plugin exports one), then kc_register_backends into a
// scratch registry so that a clash is reported before anything is merged.
#include "kc/plugin.h"

#include <dlfcn.h>

#include <exception>
#include <functional>

namespace kc {
namespace {

// Calls into the plugin's code, which kcheck did not build: an exception it lets out
// becomes the plugin's error (its path, "<what> threw: ..."), not std::terminate.
Status call_plugin(const std::string& path, const std::string& what, const std::function<Status()>& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    return failed_precondition("--plugin " + path + ": " + what + " threw: " + e.what());
  } catch (...) {
    return failed_precondition("--plugin " + path + ": " + what + " threw an exception of a non-standard type");
  }
}

}  // namespace

Status load_plugin(const std::string& path, Registry& registry) {
  // A plugin stays loaded for the life of the process: its backends' code lives there.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return not_found("--plugin " + path + ": cannot load: " + (why ? why : "unknown error"));
  }
  using VersionFn = int (*)();
  using RegisterFn = int (*)(Registry*, int);
  auto version = reinterpret_cast<VersionFn>(dlsym(lib, "kc_plugin_abi_version"));
  auto reg = reinterpret_cast<RegisterFn>(dlsym(lib, "kc_register_backends"));
  if (reg == nullptr) {
    return invalid_argument("--plugin " + path +
                            ": not a kernelcheck plugin (exports no kc_register_backends; define it with KC_PLUGIN "
                            "from kc/plugin.h)");
  }
  // kc_plugin_abi_version is optional (DESIGN section 7 names kc_register_backends
  // alone, which is given the ABI version and refuses one it was not built for); when
  // exported, a mismatch is named before anything is registered.
  int built_for = KC_PLUGIN_ABI_VERSION;
  KC_RETURN_IF_ERROR(call_plugin(path, "kc_plugin_abi_version", [&] {
    if (version != nullptr) built_for = version();
    return ok_status();
  }));
  if (built_for != KC_PLUGIN_ABI_VERSION) {
    return failed_precondition("--plugin " + path + ": built for plugin ABI version " + std::to_string(built_for) +
                               ", this kcheck has version " + std::to_string(KC_PLUGIN_ABI_VERSION) +
                               "; rebuild the plugin against this kernelcheck");
  }
  Registry added;
  KC_RETURN_IF_ERROR(call_plugin(path, "kc_register_backends", [&] {
    if (reg(&added, KC_PLUGIN_ABI_VERSION) == 0) return ok_status();
    return failed_precondition("--plugin " + path + ": kc_register_backends refused to register (ABI " +
                               std::to_string(KC_PLUGIN_ABI_VERSION) + ")");
  }));
  if (added.names().empty()) return invalid_argument("--plugin " + path + ": registered no backend");
  for (const std::string& name : added.names()) {
    if (registry.contains(name)) {
      return invalid_argument("--plugin " + path + ": backend \"" + name + "\" is already registered");
    }
  }
  for (const std::string& name : added.names()) KC_RETURN_IF_ERROR(registry.add(name, *added.factory(name)));
  return ok_status();
}

}  // namespace kc
