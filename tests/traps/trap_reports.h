// Where the trap zoo's runs leave their outputs: one folder per backend, DIR/BACKEND,
// holding its report.json, its run.log and its failures/ folder, so that no run
// overwrites another's failure reproducers.
#pragma once

#include <string>

namespace kc::traps {

inline std::string run_folder(const std::string& dir, const std::string& backend) { return dir + "/" + backend; }
inline std::string report_path(const std::string& dir, const std::string& backend) {
  return run_folder(dir, backend) + "/report.json";
}
inline std::string run_log(const std::string& dir, const std::string& backend) {
  return run_folder(dir, backend) + "/run.log";
}

// `s` as one single-quoted POSIX shell word.
inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace kc::traps
