// The kcheck command line (DESIGN section 6): one function per command.
#pragma once

#include <string>
#include <vector>

namespace kc::cli {

using Args = std::vector<std::string>;

int run_command(const Args& args);      // kcheck run PATH... [options]
int explain_command(const Args& args);  // kcheck explain CASE
int backends_command(const Args& args); // kcheck backends

// Prints "kcheck: <message>" and the usage hint to stderr; returns 2.
int usage_error(const std::string& message);

}  // namespace kc::cli
