// What a Python module declares, read in a child process (docs/python.md, "How it runs"):
// the child starts an interpreter, imports the module, calls kc_backends() and asks each
// backend its name, available() and numerics, and prints them; kcheck's parent never runs
// Python. An import error, a crash, an exit or a hang past the timeout is the module's
// error, named with its path.
#pragma once

#include <string>
#include <vector>

#include "kc/status.h"
#include "py_backend.h"

namespace kc::py {

StatusOr<std::vector<Declared>> probe_module(const std::string& path, double timeout_seconds);

// The numerics a module's dict declares, written as "key=value;..." by the probe child:
// accumulation (f64, f32, f16, bf16), flushes_subnormals, skips_padding_taps (booleans),
// relu_nan_grad (zero, pass_dy, either), algorithm (direct, winograd, fft, other) with
// transform_m and transform_r. Exposed for its test.
StatusOr<Numerics> parse_numerics(const std::string& text);

}  // namespace kc::py
