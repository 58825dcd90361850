// A plugin's code first runs in a child process (docs/plugins.md, "Trust"): its static
// initializers, kc_register_backends, each backend's factory, available() and numerics().
// An exit, abort, crash or hang there is the plugin's error, named with the stage it
// happened in, before kcheck's own process loads the library.
#pragma once

#include <string>

#include "kc/status.h"

namespace kc {

// Ok when the plugin loaded and answered every probe in a child within `timeout_seconds`;
// else failed_precondition "--plugin PATH: <what happened> while <stage>", or the error
// load_plugin gave in the child.
Status probe_plugin(const std::string& path, double timeout_seconds);

// In the probe's child: writes `line` to the parent and returns true (the terminate
// handler of a throwing static constructor reports so, instead of on stderr); elsewhere
// returns false.
bool report_to_probe(const std::string& line);

}  // namespace kc
