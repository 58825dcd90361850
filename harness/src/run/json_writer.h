// A minimal JSON writer: enough for reports, with correct string escaping and
// non-finite numbers written as strings ("nan", "inf", "-inf") so the file stays JSON.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace kc {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if the bytes there are not
// one (messages may quote bytes from a garbage input file).
inline size_t utf8_sequence(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

// The code point of the well-formed UTF-8 sequence at s[i] (shortest form, not a
// surrogate, at most U+10FFFF) in `code`; returns its length (1 to 4), 0 when there is none.
inline size_t utf8_decode(std::string_view s, size_t i, uint32_t& code) {
  const size_t n = utf8_sequence(s, i);
  if (n == 0) return 0;
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  code = n == 1 ? lead : lead & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) code = code << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  return code >= kMin[n] && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? n : 0;
}

// A JSON string literal; bytes that are not valid UTF-8 become \u00XX (read as Latin-1),
// so the report stays valid JSON whatever a message quotes.
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x80) {
      const size_t n = utf8_sequence(s, i);
      if (n == 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", ch);
        out += buf;
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

inline std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace kc
