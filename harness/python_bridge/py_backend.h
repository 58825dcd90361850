// A backend declared by a Python module (docs/python.md), behind the C++ contract. What
// kcheck's parent needs of it (its name, available(), numerics()) was read by a probe
// child (py_probe.h) and is answered from that; its instance and every other call live in
// the worker, which imports the module once and makes a fresh instance per backend object.
#pragma once

#include <memory>
#include <string>

#include "kc/backend.h"

namespace kc::py {

struct Declared {
  std::string module_path;  // the .py file
  int index = 0;            // its position in the module's kc_backends()
  std::string name;
  std::string unavailable;  // available()'s reason; empty: available
  Numerics numerics;
};

std::unique_ptr<Backend> make_python_backend(const Declared& d);

}  // namespace kc::py
