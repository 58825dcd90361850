// Report writers: the JUnit XML stays well-formed (XML 1.0 characters only) whatever
// bytes a case name or message holds; the summary says why cases were skipped and keeps
// each file name on its line.
#include "kc/report.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kc/case_io.h"
#include "kc/runner.h"

namespace kc {
namespace {

// Where `xml` holds a character XML 1.0 does not allow (or bytes that are not UTF-8):
// its byte offset, or npos. Decoded here independently of the writer.
size_t first_non_xml_char(const std::string& xml) {
  for (size_t i = 0; i < xml.size();) {
    const unsigned char b = static_cast<unsigned char>(xml[i]);
    const size_t n = b < 0x80                ? 1
                     : b >= 0xc2 && b < 0xe0 ? 2
                     : b >= 0xe0 && b < 0xf0 ? 3
                     : b >= 0xf0 && b < 0xf5 ? 4
                                             : 0;
    if (n == 0 || i + n > xml.size()) return i;
    uint32_t c = n == 1 ? b : b & (0xff >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(xml[i + k]) & 0xc0) != 0x80) return i;
      c = c << 6 | (static_cast<unsigned char>(xml[i + k]) & 0x3f);
    }
    const bool shortest = (n == 3 && c >= 0x800) || (n == 4 && c >= 0x10000) || n < 3;
    const bool ok = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
                    (c >= 0x10000 && c <= 0x10FFFF);
    if (!shortest || !ok) return i;
    i += n;
  }
  return std::string::npos;
}

TEST(Report, JunitHoldsOnlyXmlCharacters) {
  CaseResult r;
  // U+FFFE, U+FFFF, a UTF-8 surrogate, an overlong '/', past U+10FFFF, a C0 control, a
  // stray byte; then characters that must be kept: é, U+FFFD, an emoji, a C1 control.
  r.case_name =
      "a\xEF\xBF\xBE"
      "b\xEF\xBF\xBF"
      "c\xED\xA0\x80"
      "d\xC0\xAF"
      "e\xF4\x90\x80\x80"
      "f\x01g\xFFh";
  r.source = "t\xEF\xBF\xBF.yaml:1";
  r.backend = "reference";
  r.disposition = Disposition::kInvalid;
  r.message = "bad \xEF\xBF\xBE & <kept> \xC3\xA9 \xEF\xBF\xBD \xF0\x9F\x98\x80 \xC2\x85";
  const std::string xml = junit_xml({r}, RunInfo{});
  EXPECT_EQ(first_non_xml_char(xml), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"a?b?c???d??e????f g?h\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("file=\"t?.yaml\" line=\"1\""), std::string::npos) << xml;  // the line is its own attribute
  EXPECT_NE(xml.find("bad ? &amp; &lt;kept&gt; \xC3\xA9 \xEF\xBF\xBD \xF0\x9F\x98\x80 \xC2\x85"), std::string::npos)
      << xml;
}

// A failure's message attribute, which CI front ends show as its headline, names the
// checks that did not pass and what the first says; the diagnosis is the failure's text.
TEST(Report, JunitFailureHeadlineNamesTheChecks) {
  CaseResult r;
  r.case_name = "c";
  r.source = "t.yaml:1";
  r.backend = "b";
  r.disposition = Disposition::kFailed;
  r.checks = {{"forward", Disposition::kPassed, "fine"},
              {"backward", Disposition::kFailed, "dw: 36 of 36 elements outside the tolerance"},
              {"adjoint", Disposition::kMistrusted, "reference y is all zero"}};
  const std::string xml = junit_xml({r}, RunInfo{});
  EXPECT_NE(xml.find("<failure type=\"FAILED\" message=\"backward FAILED, adjoint MISTRUSTED; backward: dw: 36 of 36 "
                     "elements outside the tolerance\">"),
            std::string::npos)
      << xml;
  // A long message is cut at a character, not inside one: 239 bytes, then a 2-byte é.
  r.checks[1].message = std::string(239, 'a') + "\xC3\xA9 and more";
  const std::string cut = junit_xml({r}, RunInfo{});
  EXPECT_NE(cut.find("backward: " + std::string(239, 'a') + "...\">"), std::string::npos) << cut;
  // The case's own message, where it has one, is the headline.
  r.message = "a message of the case";
  EXPECT_NE(junit_xml({r}, RunInfo{}).find("message=\"a message of the case\">"), std::string::npos);
}

// A case whose requested checks were all skipped: the summary gives their reason.
TEST(Report, SkippedCasesSayWhy) {
  const std::vector<LoadedCase> v =
      parse_cases("op: conv\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3}\nchecks: [forward]\n", "t.yaml");
  ASSERT_TRUE(v.at(0).c.ok()) << v[0].c.status().to_string();
  auto oracle = make_reference_backend();
  const CaseResult r = check_case(*v[0].c, *oracle);
  EXPECT_EQ(r.disposition, Disposition::kSkipped);
  EXPECT_EQ(r.message.rfind("forward: the oracle is not compared with itself", 0), 0u) << r.message;
  const std::string summary = summary_text({r}, RunInfo{});
  EXPECT_NE(summary.find("skipped on reference: 1 x forward: the oracle is not compared with itself"),
            std::string::npos)
      << summary;
}

// A waived failure is one line naming its waiver; --verbose (and the report) give its
// diagnosis and worst coordinates.
TEST(Report, AWaivedFailureIsOneLineUnlessVerbose) {
  CaseResult r;
  r.case_name = "pool2d same";
  r.source = "cases/maxpool/same.yaml:3";
  r.backend = "onednn";
  r.checks.push_back({"argmax",
                      Disposition::kXfail,
                      "waived (w.yaml:4: NaN not routed): dx: NaN at 3 elements",
                      2.0,
                      1.0,
                      {{"dx", {0, 1}, 1.5, 2.0, 0.25}}});
  roll_up(r);
  ASSERT_EQ(r.disposition, Disposition::kXfail);
  const std::string quiet = summary_text({r}, RunInfo{});
  EXPECT_NE(quiet.find("XFAIL  pool2d same  [onednn]  argmax: waived (w.yaml:4: NaN not routed)\n"), std::string::npos)
      << quiet;
  EXPECT_EQ(quiet.find("NaN at 3 elements"), std::string::npos) << quiet;
  const std::string verbose = summary_text({r}, RunInfo{}, true);
  EXPECT_NE(verbose.find("dx: NaN at 3 elements"), std::string::npos) << verbose;
  EXPECT_NE(verbose.find("dx[0,1]: got 1.5"), std::string::npos) << verbose;
  EXPECT_NE(report_json({r}, RunInfo{}).find("dx: NaN at 3 elements"), std::string::npos);
}

// A file name holding a newline stays on its line in the summary and the reproducer.
TEST(Report, FileNamesWithANewlineStayOnTheirLine) {
  CaseResult r;
  r.source = "cases/a\nFAILED  fake.yaml:3";
  r.case_name = "name\nFAILED  fake";
  r.backend = "reference";
  r.disposition = Disposition::kInvalid;
  r.message = "cases/a\nFAILED  fake.yaml:3: input: missing (required)";
  const std::string summary = summary_text({r}, RunInfo{});
  EXPECT_EQ(summary.find("\nFAILED  fake"), std::string::npos) << summary;
  EXPECT_NE(summary.find("INVALID  name\\x0aFAILED  fake  [reference]  cases/a\\x0aFAILED  fake.yaml:3\n"
                         "    cases/a\\x0aFAILED  fake.yaml:3: input: missing (required)\n"),
            std::string::npos)
      << summary;
  r.disposition = Disposition::kFailed;
  r.reproducer = "{op: conv}";
  const std::string yaml = failure_yaml(r);
  EXPECT_EQ(yaml.find("\nFAILED  fake"), std::string::npos) << yaml;
  EXPECT_EQ(file_on_one_line("no newline here", "a.yaml"), "no newline here");
  // A carriage return, which YAML readers also take as a line break, is escaped too.
  r.case_name = "name\rFAILED  fake";
  const std::string cr = failure_yaml(r);
  EXPECT_EQ(cr.find('\r'), std::string::npos) << cr;
  EXPECT_NE(cr.find("name\\x0dFAILED  fake"), std::string::npos) << cr;
}

// Whatever the names, messages and tensor names hold, the reproducer's header is comment
// lines: the file reads back as its one case and nothing else.
TEST(Report, FailureYamlHeaderStaysComments) {
  const std::string conv =
      "{op: conv, input: {batch: 1, channels: 1, spatial: [5]}, conv: {out_channels: 1, kernel: 3}}";
  CaseResult r;
  r.case_name = "name\r- {op: maxpool}\n- x";
  r.source = "a\rcases: [].yaml:3";
  r.backend = "b\r\nop: maxpool";
  r.disposition = Disposition::kFailed;
  r.message = "message\rop: maxpool\n\rkernel: 3\x0bx\x0c\x85y \xc2\x85op: a \xe2\x80\xa8op: b \xe2\x80\xa9op: c";
  r.reproducer = conv;
  CheckResult c{"forward", Disposition::kFailed, "y\r: [bad\nline two\r\x1b[2J\n\n", 2.5};
  c.worst.push_back(WorstPoint{"y\rop: x", {0, 1}, 1, 2, 0.5});
  c.worst.push_back(WorstPoint{std::string(300, 'y') + "\r{", {}, 1, 2, 0.5});  // cut by the line's width
  r.checks.push_back(c);
  const std::string yaml = failure_yaml(r);
  EXPECT_EQ(yaml.find('\r'), std::string::npos) << yaml;
  // YAML 1.1's Unicode line breaks too, which some readers and editors end a line at.
  for (const char* brk : {"\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9"}) EXPECT_EQ(yaml.find(brk), std::string::npos);
  EXPECT_NE(yaml.find("\\u0085op: a \\u2028op: b \\u2029op: c"), std::string::npos) << yaml;
  size_t lines = 0;
  for (size_t start = 0, end; (end = yaml.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    if (end + 1 < yaml.size()) EXPECT_EQ(yaml[start], '#') << yaml.substr(start, end - start);
  }
  EXPECT_GT(lines, 6u) << yaml;
  const std::vector<LoadedCase> back = parse_cases(yaml, "r.yaml");
  ASSERT_EQ(back.size(), 1u) << yaml;
  ASSERT_TRUE(back[0].c.ok()) << back[0].c.status().to_string() << "\n" << yaml;
  EXPECT_EQ(*back[0].c, *parse_cases(conv, "c.yaml")[0].c);
}

}  // namespace
}  // namespace kc
