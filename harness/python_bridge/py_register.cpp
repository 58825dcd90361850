// libkc_python.so's entry point: a kcheck plugin whose backends are those of the Python
// module named by KC_PYTHON_MODULE (set by kcheck's --python for each module it loads;
// harness/src/backend/python_modules.cpp). It only reads the module's declarations from a
// probe child: loading this library starts no interpreter.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kc/plugin.h"
#include "kc/registry.h"
#include "py_probe.h"

namespace kc::py {
namespace {

void register_module(Registry& registry) {
  const char* path = std::getenv("KC_PYTHON_MODULE");
  if (path == nullptr || *path == '\0') throw std::runtime_error("KC_PYTHON_MODULE names no Python module");
  const char* limit = std::getenv("KC_PYTHON_PROBE_SECONDS");
  const double seconds = limit != nullptr ? std::atof(limit) : 60.0;
  StatusOr<std::vector<Declared>> declared = probe_module(path, seconds > 0 ? seconds : 60.0);
  if (!declared.ok()) throw std::runtime_error(declared.status().message());
  for (const Declared& d : *declared) {
    if (Status s = registry.add(d.name, [d] { return make_python_backend(d); }); !s.ok()) {
      throw std::runtime_error("--python " + std::string(path) + ": " + s.message());
    }
  }
}

}  // namespace
}  // namespace kc::py

KC_PLUGIN(kc::py::register_module)
