// kcheck backends: every backend of this build, available or unavailable (reason).
#include <algorithm>
#include <cstdio>

#include "cli.h"
#include "kc/plugin.h"
#include "kc/registry.h"

namespace kc::cli {

int backends_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(
        "usage: kcheck backends [--plugin lib.so]...\n"
        "  every backend of this build (and of the plugins): available, or unavailable (reason),\n"
        "  and the numerics it declares (accumulation, algorithm, subnormals, padding taps, relu'(NaN))\n",
        stdout);
    return 0;
  }
  Registry reg = builtin_registry();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--plugin" || i + 1 == args.size())
      return usage_error("backends: usage: kcheck backends [--plugin lib.so]...");
    if (Status s = load_plugin(args[++i], reg); !s.ok()) return usage_error(s.message());
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
