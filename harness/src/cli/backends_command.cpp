// kcheck backends: every backend of this build, available or unavailable (reason).
#include <algorithm>
#include <cstdio>

#include "backend/python_modules.h"
#include "cli.h"
#include "kc/plugin.h"
#include "kc/registry.h"

namespace kc::cli {

int backends_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(
        "usage: kcheck backends [--plugin lib.so]... [--python mod.py]...\n"
        "  every backend of this build (and of the plugins and Python modules): available, or unavailable (reason),\n"
        "  and the numerics it declares (accumulation, algorithm, subnormals, padding taps, relu'(NaN))\n",
        stdout);
    return 0;
  }
  Registry reg = builtin_registry();
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] != "--plugin" && args[i] != "--python") || i + 1 == args.size())
      return usage_error("backends: usage: kcheck backends [--plugin lib.so]... [--python mod.py]...");
    const std::string& flag = args[i];
    const std::string& file = args[++i];
    const Status s =
        flag == "--plugin" ? load_plugin(file, reg) : load_python_module(file, reg, kDefaultTimeoutSeconds);
    if (!s.ok()) return usage_error(s.message());
  }
  int width = 12;
  for (const std::string& name : reg.names()) width = std::max(width, static_cast<int>(name.size()));
  for (const std::string& name : reg.names()) {
    const Status s = backend_available(reg, name);
    std::printf("%-*s %s\n", width, terminal_safe(name).c_str(),
                s.ok() ? "available" : terminal_safe("unavailable (" + s.message() + ")").c_str());
    if (s.ok()) std::printf("%-*s   numerics: %s\n", width, "", terminal_safe(backend_numerics(reg, name)).c_str());
  }
  return 0;
}

}  // namespace kc::cli
