// Reading fields of Google Benchmark JSON through yaml-cpp (JSON is YAML's flow style):
// numbers with strtod, which also takes the NaN and inf that the library writes; a field
// absent or of another type reads as nothing, and the caller names it in its error.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

namespace kc::bench {

inline std::optional<double> number_value(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::nullopt;
  const std::string s = n.Scalar();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return v;
}

inline std::string string_field(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

// Seconds per unit of Google Benchmark's time_unit.
inline std::optional<double> unit_seconds(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  return std::nullopt;
}

}  // namespace kc::bench
