// The module's path crosses to the bridge in KC_PYTHON_MODULE, read by the bridge's
// kc_register_backends when it runs (in the plugin probe's child, then here); workers
// inherit the registered factories, which carry the path themselves.
#include "backend/python_modules.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "kc/plugin.h"

namespace kc {

std::string python_bridge_path() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("KC_PYTHON_BRIDGE"); env != nullptr && *env != '\0') {
    return fs::exists(env) ? std::string(env) : std::string();
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& candidate :
       {exe.parent_path() / "libkc_python.so", exe.parent_path() / "../lib/kernelcheck/libkc_python.so"}) {
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return {};
}

Status load_python_module(const std::string& file, Registry& registry, double probe_seconds) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return failed_precondition("--python " + file + ": no such file");
  if (access(file.c_str(), R_OK) != 0) return failed_precondition("--python " + file + ": cannot be read");
  const std::string bridge = python_bridge_path();
  if (bridge.empty()) {
    return failed_precondition("--python " + file +
                               ": this kcheck was built without the Python bridge (libkc_python.so is not next to "
                               "it; install python3-dev and rebuild, or set KC_PYTHON_BRIDGE)");
  }
  setenv("KC_PYTHON_MODULE", fs::absolute(file).c_str(), 1);
  // The module's own probe ends first, so that a hung import is named as the module's,
  // not as the bridge library's.
  setenv("KC_PYTHON_PROBE_SECONDS", std::to_string(0.9 * probe_seconds).c_str(), 1);
  Status s = load_plugin(bridge, registry, probe_seconds);
  unsetenv("KC_PYTHON_MODULE");
  unsetenv("KC_PYTHON_PROBE_SECONDS");
  if (s.ok()) return s;
  // The bridge's own error names the module; the plugin loader's prefix names the bridge.
  const std::string& m = s.message();
  const size_t at = m.find("--python ");
  return failed_precondition(at == std::string::npos ? "--python " + file + ": " + m : m.substr(at));
}

}  // namespace kc
