// shell_quote (cli.h): one argument as a POSIX shell word that stays on its line. Plain
// text goes in single quotes; text with a control character goes in bash's $'...' with
// every control byte as \xHH, since no POSIX quote keeps a newline off the next line.
#include "cli.h"

namespace kc::cli {
namespace {

bool is_control(unsigned char u) { return u < 0x20 || u == 0x7f; }

// $'...': backslash and quote escaped, control bytes as \xHH (two digits always, so that
// a hex digit after one is not read into it), other bytes (UTF-8 included) as they are.
std::string dollar_quote(std::string_view text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "$'";
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\\' || ch == '\'') {
      out += '\\';
      out += ch;
    } else if (is_control(u)) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += ch;
    }
  }
  return out + "'";
}

}  // namespace

std::string shell_quote(std::string_view text) {
  for (char ch : text) {
    if (is_control(static_cast<unsigned char>(ch))) return dollar_quote(text);
  }
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace kc::cli
