// kcheck checks [--markdown]: the check table (core/check_table.h) as text or as the
// README's markdown table, so that neither can drift from the code.
#include <cstdio>
#include <string>

#include "cli.h"
#include "core/check_table.h"

namespace kc::cli {
namespace {

std::string applies_to(const CheckInfo& info) {
  const std::vector<std::string_view> ops = ops_checked_by(info);
  if (ops.size() == all_ops().size()) return "every op and stacks";
  std::string s;
  for (std::string_view name : ops) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

}  // namespace

int checks_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(
        "usage: kcheck checks [--markdown]\n  every check: what it proves, whether it runs on the oracle, "
        "what it applies to\n",
        stdout);
    return 0;
  }
  const bool markdown = args.size() == 1 && args[0] == "--markdown";
  if (!args.empty() && !markdown) return usage_error("checks: usage: kcheck checks [--markdown]");
  if (markdown) std::puts("| check | proves | on the oracle | applies to |\n|---|---|---|---|");
  for (const CheckInfo& info : check_table()) {
    const std::string name(info.name), proves(info.proves), ops = applies_to(info);
    const char* oracle = info.on_oracle ? "yes" : "no";
    if (markdown) {
      std::printf("| `%s` | %s | %s | %s |\n", name.c_str(), proves.c_str(), oracle, ops.c_str());
    } else {
      std::printf("%-13s %s\n%-13s on the oracle: %s; applies to: %s\n", name.c_str(), proves.c_str(), "", oracle,
                  ops.c_str());
    }
  }
  return 0;
}

}  // namespace kc::cli
