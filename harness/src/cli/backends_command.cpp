// kcheck backends: every backend of this build, available or unavailable (reason).
#include <cstdio>

#include "cli.h"
#include "kc/registry.h"

namespace kc::cli {

int backends_command(const Args& args) {
  if (!args.empty()) return usage_error("backends: takes no arguments");
  const Registry reg = builtin_registry();
  for (const std::string& name : reg.names()) {
    const Status s = reg.make(name)->available();
    std::printf("%-12s %s\n", name.c_str(), s.ok() ? "available" : ("unavailable (" + s.message() + ")").c_str());
  }
  return 0;
}

}  // namespace kc::cli
