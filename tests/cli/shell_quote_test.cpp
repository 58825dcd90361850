// shell_quote: every argument a word that bash reads back to the exact bytes, on one line.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli.h"

namespace kc::cli {
namespace {

// What bash makes of `word`: printf's %s of it, read back byte for byte.
std::string through_bash(const std::string& word) {
  const std::string script = "printf '%s' " + word;
  const std::string cmd = "bash -c " + shell_quote(script);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "<popen failed>";
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(ShellQuote, PlainTextInSingleQuotes) {
  EXPECT_EQ(shell_quote("trap.none"), "'trap.none'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME `id` \"x\" \\ *"), "'$HOME `id` \"x\" \\ *'");
}

TEST(ShellQuote, ControlCharactersStayOnTheLine) {
  EXPECT_EQ(shell_quote("a\nb"), "$'a\\x0ab'");
  EXPECT_EQ(shell_quote("a\r'\\\x7f"
                        "f"),
            "$'a\\x0d\\'\\\\\\x7ff'");
  for (const std::string& s : {std::string("a\nb"), std::string("x\ty\rz\x1b[2J"), std::string("q'\n\\")}) {
    const std::string q = shell_quote(s);
    for (char ch : q) EXPECT_FALSE(ch == '\n' || ch == '\r') << q;
  }
}

// Every byte but NUL (which no argument holds), in both forms, and UTF-8 text.
TEST(ShellQuote, BashReadsBackTheExactBytes) {
  std::string all;
  for (int b = 1; b < 256; ++b) all += static_cast<char>(b);
  std::string printable;
  for (int b = 0x20; b < 256; ++b) printable += b == 0x7f ? ' ' : static_cast<char>(b);
  for (const std::string& s :
       {all, printable, std::string("trap.\xc3\xa9t\xc3\xa9\n'$(touch x)'"), std::string("-"), std::string("")}) {
    EXPECT_EQ(through_bash(shell_quote(s)), s) << shell_quote(s);
  }
}

}  // namespace
}  // namespace kc::cli
