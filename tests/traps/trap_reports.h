// Where the trap zoo's run leaves its outputs: one folder per backend, DIR/BACKEND,
// holding its report.json and its failures/ folder (kcheck run --report
// DIR/{backend}/report.json), so that no backend's reproducers mix with another's; the
// run's log is DIR/run.log.
#pragma once

#include <string>

namespace kc::traps {

inline std::string run_folder(const std::string& dir, const std::string& backend) { return dir + "/" + backend; }
inline std::string report_path(const std::string& dir, const std::string& backend) {
  return run_folder(dir, backend) + "/report.json";
}

// `s` as one single-quoted POSIX shell word.
inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace kc::traps
