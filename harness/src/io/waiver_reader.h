// Waiver files (--waivers FILE): known failures, each naming the case (a glob over its
// name or file), the backend (a glob), the check, a diagnosis substring, why, and an
// optional expiry date. Read and validated here; applied by run/waivers.h.
#pragma once

#include <string>
#include <vector>

#include "kc/status.h"

namespace kc {

struct Waiver {
  std::string case_glob;     // matched against the case name and against its file
  std::string backend_glob;  // matched against the backend name
  std::string check;         // a check of the check table
  std::string diagnosis;     // a substring of the check's message; empty: any failure
  std::string reason;        // why it is known, never empty
  std::string expires;       // YYYY-MM-DD or empty; past it the waiver is ignored
  std::string source;        // file:line
  std::string cpu;           // a CPU flag (as /proc/cpuinfo names it) it needs; empty: any CPU
  // The failure depends on what the library leaves to chance (memory it never wrote, a
  // race): a pass is PASSED, counted in the summary, not XPASS.
  bool intermittent = false;
};

// The waivers of `path`: a list under `waivers:` (or a list at the top), read as strictly
// as a case file: a regular file within kMaxCaseFileBytes, one YAML document, no unknown
// or duplicate keys, `expires` a real calendar day. Errors name the file, line, field
// and reason; running out of memory while reading is resource_exhausted. Never throws.
StatusOr<std::vector<Waiver>> load_waivers(const std::string& path);

}  // namespace kc
