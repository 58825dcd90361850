// Plugin loading: dlopen, the ABI-version check (when the plugin exports one), then kc_register_backends into a
// scratch registry so that a clash is reported before anything is merged.
#include "kc/plugin.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>

#include "backend/candidate_call.h"
#include "backend/plugin_probe.h"
#include "core/fp_env.h"

namespace kc {
namespace {

// The plugin dlopen is loading, for loading_terminate; g_load_mutex makes loads one at a
// time, so the handler is installed and removed by one of them.
const std::string* g_loading = nullptr;
std::mutex g_load_mutex;

// A plugin's static constructors run inside dlopen, whose C frames an exception cannot
// cross: std::terminate is called whatever kcheck catches. While a plugin loads, this
// terminate handler names the library and the exception and exits 2 (bad input), the
// plugin's error, where the default would abort with a core dump.
[[noreturn]] void loading_terminate() {
  std::string what = "an exception of a non-standard type";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
  } else {
    what = "std::terminate without an exception";
  }
  std::string line = "--plugin " + (g_loading ? *g_loading : std::string("?")) +
                     ": a static constructor threw while the library loaded: " + what;
  for (char& ch : line) {
    // No terminal control from a plugin: C0, DEL, and every byte past ASCII (UTF-8's C1
    // controls among them) print as '?' in this last message.
    const auto b = static_cast<unsigned char>(ch);
    if (b < 0x20 || b >= 0x7f) ch = '?';
  }
  if (!report_to_probe("error:" + line)) {  // in the probe the parent says it, once
    std::fprintf(stderr, "kcheck: %s\n", line.c_str());
    std::fflush(stderr);
  }
  std::_Exit(2);
}

// dlopen with loading_terminate installed, and the previous handler back afterwards.
// While it runs, a std::terminate in any thread of the process ends it this way.
void* open_library(const std::string& path) {
  const std::lock_guard<std::mutex> one_at_a_time(g_load_mutex);
  struct Installed {
    std::terminate_handler previous;
    explicit Installed(const std::string& p) : previous(std::set_terminate(loading_terminate)) { g_loading = &p; }
    ~Installed() {
      std::set_terminate(previous);
      g_loading = nullptr;
    }
  } installed(path);
  return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

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

Status load_plugin(const std::string& path, Registry& registry, double probe_seconds) {
  KC_RETURN_IF_ERROR(probe_plugin(path, probe_seconds));
  return load_plugin_here(path, registry);
}

Status load_plugin_here(const std::string& path, Registry& registry) {
  // A plugin stays loaded for the life of the process: its backends' code lives there.
  void* lib = open_library(path);
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
  // kc_plugin_abi_version is optional (docs/plugins.md names kc_register_backends
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
  // What the library's constructors (-ffast-math's crtfastmath sets FTZ/DAZ) and its
  // registration left is the environment its backends run in; the judge's is restored.
  const FpEnv loaded = current_fp_env();
  pin_judge_fp_env();
  if (!added.problems().empty()) return invalid_argument("--plugin " + path + ": " + added.problems().front());
  if (added.names().empty()) return invalid_argument("--plugin " + path + ": registered no backend");
  for (const std::string& name : added.names()) {
    if (registry.contains(name)) {
      return invalid_argument("--plugin " + path + ": backend \"" + name +
                              "\" is already registered (a built-in backend's name, or another plugin's)");
    }
  }
  for (const std::string& name : added.names()) {
    KC_RETURN_IF_ERROR(registry.add(name, *added.factory(name)));
    set_candidate_fp_env(name, loaded);
  }
  return ok_status();
}

}  // namespace kc
