// Small text helpers of the HTML and text dashboards: printf into a std::string and
// HTML escaping (every string from a run's JSON goes through escape()).
#pragma once

#include <cstdio>
#include <string>

namespace kc::bench {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  const int n = std::snprintf(nullptr, 0, fmt, args...);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  std::snprintf(s.data(), s.size() + 1, fmt, args...);
  return s;
}

inline std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace kc::bench
