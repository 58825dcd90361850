// The one home for how numbers, coordinates and lists of names read in messages, so that
// every check, validation and generator prints them alike. Header-only, never throws.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "kc/tensor.h"

namespace kc {

inline std::string num(int64_t v) { return std::to_string(v); }

// Nine significant digits: 0.5, -inf, nan, 2e-07.
inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Six significant digits, for ratios and sums quoted as evidence, not as values.
inline std::string num_brief(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Every digit: two values that differ in the last bit print differently.
inline std::string num_exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "a, b and c" (last_sep " and ") or "a, b or c": a list of names in a sentence.
template <class Names>
std::string name_list(const Names& names, std::string_view last_sep) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += std::string(i == 0 ? "" : i + 1 == names.size() ? last_sep : ", ") + std::string(names[i]);
  }
  return text;
}

// "1st", "2nd", "11th", "23rd".
inline std::string ordinal(int64_t n) {
  const int64_t t = n % 100;
  const char* suffix = (t >= 11 && t <= 13) ? "th"
                       : n % 10 == 1        ? "st"
                       : n % 10 == 2        ? "nd"
                       : n % 10 == 3        ? "rd"
                                            : "th";
  return std::to_string(n) + suffix;
}

// Multi-index of flat position i in a row-major tensor of the given shape.
inline std::vector<int64_t> unravel(int64_t i, const Dims& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    idx[a] = shape[a] > 0 ? i % shape[a] : 0;
    i = shape[a] > 0 ? i / shape[a] : 0;
  }
  return idx;
}

// "(0, 0, 1, 2)"
inline std::string tuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

inline std::string at(int64_t flat, const Dims& shape) { return tuple(unravel(flat, shape)); }

}  // namespace kc
