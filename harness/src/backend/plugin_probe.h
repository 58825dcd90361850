// A plugin's code first runs in a child process (docs/plugins.md, "Trust"): its static
// initializers, kc_register_backends, each backend's factory, available() and numerics().
// An exit, abort, crash or hang there is the plugin's error, named with the stage it
// happened in, before kcheck's own process loads the library.
#pragma once

#include <functional>
#include <string>

#include "kc/status.h"

namespace kc {

// Ok when the plugin loaded and answered every probe in a child within `timeout_seconds`;
// else failed_precondition "--plugin PATH: <what happened> while <stage>", or the error
// load_plugin gave in the child.
Status probe_plugin(const std::string& path, double timeout_seconds);

// What a probe child wrote on its pipe, and how it ended.
struct ProbeOutput {
  std::string error;  // the pipe or the fork failed ("cannot start a process to probe it")
  std::string out;
  bool timed_out = false;
  int status = 0;  // waitpid's, once it ended
};

// Forks a child that runs `child(fd)` (which must not return: it ends with _exit) and
// reads what it writes on fd until `finished(out)` holds, the child ends with nothing
// more to say (a descendant may hold the pipe open), or `timeout_seconds` pass; then the
// child is killed and reaped. With `own_group` the child leads a process group, killed
// whole; without, it stays in this process's group (a probe inside another probe's child,
// killed with it). The --plugin probe and the Python bridge's module probe share it.
ProbeOutput run_probe_child(const std::function<void(int fd)>& child, double timeout_seconds,
                            const std::function<bool(const std::string& out)>& finished, bool own_group);

// "was killed by signal 11 (Segmentation fault)" or "exited with status 3".
std::string how_child_ended(int status);

// In the probe's child: writes `line` to the parent and returns true (the terminate
// handler of a throwing static constructor reports so, instead of on stderr); elsewhere
// returns false.
bool report_to_probe(const std::string& line);

}  // namespace kc
