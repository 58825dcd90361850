// `--python FILE`: the backends a Python module declares (docs/python.md), registered
// through the Python bridge (libkc_python.so, a plugin built beside kcheck when Python's
// headers are found), which reads the module in a probe child and runs it only in workers.
#pragma once

#include <string>

#include "kc/registry.h"
#include "kc/status.h"

namespace kc {

// Where the bridge is: $KC_PYTHON_BRIDGE, else libkc_python.so next to the running
// executable; empty when neither exists.
std::string python_bridge_path();

// Registers the module's backends; errors name the file and say why (no such file, no
// bridge in this build, the module's traceback, a name clash).
Status load_python_module(const std::string& file, Registry& registry, double probe_seconds);

}  // namespace kc
