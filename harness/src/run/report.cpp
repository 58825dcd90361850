// Report writers (see report.h).
#include "kc/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "kc/case_io.h"
#include "run/json_writer.h"

#include <cstdlib>

namespace kc {
namespace {

std::string worst_json(const WorstPoint& w) {
  std::string s = "{\"tensor\": " + json_string(w.tensor) + ", \"index\": [";
  for (size_t i = 0; i < w.index.size(); ++i) s += (i ? ", " : "") + std::to_string(w.index[i]);
  return s + "], \"candidate\": " + json_number(w.candidate) + ", \"reference\": " + json_number(w.reference) +
         ", \"bound\": " + json_number(w.bound) + "}";
}

std::string check_json(const CheckResult& c) {
  std::string s =
      "{\"name\": " + json_string(c.name) + ", \"disposition\": " + json_string(disposition_name(c.disposition)) +
      ", \"message\": " + json_string(c.message) + ", \"max_error_ratio\": " + json_number(c.max_error_ratio) +
      ", \"max_abs_error\": " + json_number(c.max_abs_error) + ", \"seconds\": " + json_number(c.seconds) +
      ", \"worst\": [";
  for (size_t i = 0; i < c.worst.size(); ++i) s += (i ? ", " : "") + worst_json(c.worst[i]);
  return s + "]}";
}

// "x.yaml:7" as its file and line (0 when the source names no line).
std::pair<std::string, int> file_and_line(const std::string& source) {
  const size_t colon = source.rfind(':');
  if (colon == std::string::npos || colon + 1 == source.size()) return {source, 0};
  for (size_t i = colon + 1; i < source.size(); ++i) {
    if (source[i] < '0' || source[i] > '9') return {source, 0};
  }
  return {source.substr(0, colon), std::atoi(source.c_str() + colon + 1)};
}

std::string fields_json(const CaseResult& r) {
  const auto [file, line] = file_and_line(r.source);
  std::string s = "{";
  for (const auto& [k, v] : r.fields) s += json_string(k) + ": " + json_string(v) + ", ";
  return s + "\"file\": " + json_string(file) + ", \"line\": " + std::to_string(line) + "}";
}

std::string result_json(const CaseResult& r) {
  std::string s = "    {\"case\": " + json_string(r.case_name) + ", \"source\": " + json_string(r.source) +
                  ", \"fields\": " + fields_json(r) + ", \"backend\": " + json_string(r.backend) +
                  ", \"disposition\": " + json_string(disposition_name(r.disposition)) +
                  ", \"message\": " + json_string(r.message) + ", \"seconds\": " + json_number(r.seconds) +
                  ", \"reproducer\": " + json_string(r.reproducer) + ",\n     \"checks\": [";
  for (size_t i = 0; i < r.checks.size(); ++i) s += (i ? ",\n                " : "") + check_json(r.checks[i]);
  return s + "]}";
}

// XML 1.0's Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
bool xml_char(uint32_t code) {
  return code == 0x9 || code == 0xA || code == 0xD || (code >= 0x20 && code <= 0xD7FF) ||
         (code >= 0xE000 && code <= 0xFFFD) || (code >= 0x10000 && code <= 0x10FFFF);
}

// Text for an XML attribute or element: markup escaped, control characters other than
// newline and tab as spaces, and whatever XML 1.0 does not allow (U+FFFE, U+FFFF, bytes
// that are not UTF-8) as '?', so that the file stays well-formed whatever a name holds.
std::string xml_escape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t code = 0;
    const size_t n = utf8_decode(s, i, code);
    const char ch = s[i];
    i += std::max<size_t>(n, 1);
    if (n == 0 || (code >= 0x20 && !xml_char(code)))
      out += '?';
    else if (n > 1)
      out.append(s.substr(i - n, n));
    else if (ch == '<')
      out += "&lt;";
    else if (ch == '>')
      out += "&gt;";
    else if (ch == '&')
      out += "&amp;";
    else if (ch == '"')
      out += "&quot;";
    else if (code < 0x20 && ch != '\n' && ch != '\t')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

// The file a result came from: its source without the ":line".
std::string_view source_file(const CaseResult& r) { return source_file_of(r.source); }

bool is_problem(Disposition d) { return d != Disposition::kPassed && d != Disposition::kSkipped; }

std::string diagnosis(const CaseResult& r) {
  std::string s = r.message.empty() ? "" : "    " + r.message + "\n";
  for (const CheckResult& c : r.checks) {
    if (!is_problem(c.disposition)) continue;
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, " (max error/bound %.3g)", c.max_error_ratio);
    s += "    " + c.name + ": " + std::string(disposition_name(c.disposition)) + ": " + c.message +
         (c.max_error_ratio > 0 ? ratio : "") + "\n";
    for (const WorstPoint& w : c.worst) {
      std::string idx;
      for (int64_t v : w.index) idx += (idx.empty() ? "" : ",") + std::to_string(v);
      char line[160];
      // A scalar (an inner product of the adjoint check) has no index.
      std::snprintf(line, sizeof line, "      %s%s%s%s: got %.9g, want %.9g (bound %.3g)\n", w.tensor.c_str(),
                    w.index.empty() ? "" : "[", idx.c_str(), w.index.empty() ? "" : "]", w.candidate, w.reference,
                    w.bound);
      s += line;
    }
  }
  return s;
}

// The files passed over that set_passed_over recorded, as one line, or empty.
std::string passed_over_line(const RunInfo& info) {
  PassedOver counts;
  for (const PassOverReason& why : kPassOverReasons) {
    const auto it = info.extra.find("passed_over_" + std::string(why.key));
    if (it != info.extra.end()) counts[std::string(why.key)] = std::strtoll(it->second.c_str(), nullptr, 10);
  }
  const std::string text = passed_over_text(counts);
  return text.empty() ? text : text + "\n";
}

}  // namespace

void set_passed_over(RunInfo& info, const PassedOver& counts) {
  int64_t total = 0;
  for (const PassOverReason& why : kPassOverReasons) {
    const int64_t n = passed_over_count(counts, why);
    info.extra["passed_over_" + std::string(why.key)] = std::to_string(n);
    total += n;
  }
  info.extra["passed_over"] = std::to_string(total);
}

std::map<std::string, int> summary_counts(const std::vector<CaseResult>& results) {
  std::map<std::string, int> counts;
  for (Disposition d : kAllDispositions) counts[std::string(disposition_key(d))] = 0;
  for (const CaseResult& r : results) counts[std::string(disposition_key(r.disposition))]++;
  return counts;
}

std::string report_json(const std::vector<CaseResult>& results, const RunInfo& info) {
  std::string s = "{\n  \"schema_version\": " + std::to_string(kReportSchemaVersion) +
                  ",\n  \"tool\": \"kcheck\",\n  \"command\": " + json_string(info.command) +
                  ",\n  \"started\": " + json_string(info.started) + ",\n  \"seconds\": " + json_number(info.seconds);
  for (const auto& [k, v] : info.extra) s += ",\n  " + json_string(k) + ": " + json_string(v);
  s += ",\n  \"summary\": {";
  bool first = true;
  for (const auto& [k, n] : summary_counts(results)) {
    s += (first ? "" : ", ") + json_string(k) + ": " + std::to_string(n);
    first = false;
  }
  s += ", \"total\": " + std::to_string(results.size()) + "},\n  \"backends\": " + backends_json(results, info) +
       ",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) s += (i ? ",\n" : "") + result_json(results[i]);
  return s + "\n  ]\n}\n";
}

// A failure's one line for CI front ends, which show JUnit's message attribute as the
// headline: the case's own message, else the checks that did not pass and what the first
// of them says (its diagnosis in full is the failure's text).
std::string headline(const CaseResult& r) {
  if (!r.message.empty()) return r.message;
  std::string names;
  const CheckResult* first = nullptr;
  for (const CheckResult& c : r.checks) {
    if (!is_problem(c.disposition)) continue;
    names += (names.empty() ? "" : ", ") + c.name + " " + std::string(disposition_name(c.disposition));
    if (first == nullptr) first = &c;
  }
  if (first == nullptr) return {};
  constexpr size_t kMax = 240;
  std::string what = first->message;
  if (what.size() > kMax) {
    size_t cut = kMax;  // not inside a UTF-8 character: back up over continuation bytes
    while (cut > 0 && (static_cast<unsigned char>(what[cut]) & 0xC0) == 0x80) --cut;
    what = what.substr(0, cut) + "...";
  }
  return names + "; " + first->name + ": " + what;
}

namespace {

// Every backend considered as a JUnit property, so that a CI page says what ran where.
std::string junit_backends(const std::vector<CaseResult>& results, const RunInfo& info) {
  if (info.backends.empty()) return {};
  std::string s = "  <properties>\n";
  for (const BackendStatus& b : info.backends) {
    s += "    <property name=\"backend." + xml_escape(b.name) + "\" value=\"" + xml_escape(backend_state(results, b)) +
         "\"/>\n";
  }
  return s + "  </properties>\n";
}

}  // namespace

std::string junit_xml(const std::vector<CaseResult>& results, const RunInfo& info) {
  int failures = 0, skipped = 0, errors = 0;
  for (const CaseResult& r : results) {
    failures += r.disposition == Disposition::kFailed || r.disposition == Disposition::kMistrusted ||
                r.disposition == Disposition::kXpass;
    errors += r.disposition == Disposition::kCrashed || r.disposition == Disposition::kTimeout ||
              r.disposition == Disposition::kInvalid;
    skipped += r.disposition == Disposition::kSkipped || r.disposition == Disposition::kXfail;
  }
  char head[256];
  std::snprintf(
      head, sizeof head,
      "<testsuite name=\"kcheck\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
      results.size(), failures, errors, skipped, info.seconds);
  std::string s = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") + head;
  s += junit_backends(results, info);
  for (const CaseResult& r : results) {
    const auto [file, line] = file_and_line(r.source);
    s += "  <testcase classname=\"" + xml_escape(r.backend) + "\" name=\"" + xml_escape(r.case_name) + "\" file=\"" +
         xml_escape(file) + "\"" + (line > 0 ? " line=\"" + std::to_string(line) + "\"" : std::string()) + " time=\"" +
         std::to_string(r.seconds) + "\">";
    const std::string d(disposition_name(r.disposition));
    if (r.disposition == Disposition::kSkipped) s += "<skipped message=\"" + xml_escape(r.message) + "\"/>";
    // A waived failure is a skip with its reason in CI pages (the xfail of pytest's JUnit).
    if (r.disposition == Disposition::kXfail) s += "<skipped message=\"XFAIL: " + xml_escape(headline(r)) + "\"/>";
    if (r.disposition == Disposition::kFailed || r.disposition == Disposition::kMistrusted ||
        r.disposition == Disposition::kXpass) {
      s += "<failure type=\"" + d + "\" message=\"" + xml_escape(headline(r)) + "\">" + xml_escape(diagnosis(r)) +
           "</failure>";
    }
    if (r.disposition == Disposition::kCrashed || r.disposition == Disposition::kTimeout ||
        r.disposition == Disposition::kInvalid) {
      s += "<error type=\"" + d + "\" message=\"" + xml_escape(r.message) + "\"/>";
    }
    s += "</testcase>\n";
  }
  return s + "</testsuite>\n";
}

namespace {

// Why cases were skipped, per backend: the most frequent reasons with their counts (a
// backend without a device, a case it does not support), so that a run that checked
// less than it seems says so on the terminal, not only in the report.
std::string skip_reasons(const std::vector<CaseResult>& results) {
  constexpr size_t kShown = 4, kWidth = 150;
  std::map<std::string, std::map<std::string, int>> by_backend;
  for (const CaseResult& r : results) {
    if (r.disposition == Disposition::kSkipped)
      ++by_backend[r.backend][r.message.empty() ? "(no reason given)" : r.message];
  }
  std::string s;
  for (const auto& [backend, reasons] : by_backend) {
    const std::vector<std::pair<int, std::string>> sorted = most_frequent_first(reasons);
    for (size_t i = 0; i < sorted.size() && i < kShown; ++i) {
      std::string why = sorted[i].second;
      if (why.size() > kWidth) why = why.substr(0, kWidth - 3) + "...";
      s += "  skipped on " + backend + ": " + std::to_string(sorted[i].first) + " x " + why + "\n";
    }
    if (sorted.size() > kShown) {
      s += "  skipped on " + backend + ": " + std::to_string(sorted.size() - kShown) +
           " more reasons (see the report)\n";
    }
  }
  return s;
}

}  // namespace

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  static const char* const kHex = "0123456789abcdef";
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7f) {  // every control character, \r as well as \n: a line stays one line
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string file_on_one_line(std::string text, std::string_view file) {
  const std::string safe = one_line(file);
  if (file.empty() || safe == file) return text;
  for (size_t at = text.find(file); at != std::string::npos; at = text.find(file, at + safe.size())) {
    text.replace(at, file.size(), safe);
  }
  return text;
}

// A waived failure as one line: the case, the backend, each waived check and its waiver
// (the diagnosis is in the report, and in the summary with --verbose).
std::string xfail_line(const CaseResult& r) {
  std::string s = "XFAIL  " + one_line(r.case_name) + "  [" + one_line(r.backend) + "]";
  for (const CheckResult& c : r.checks) {
    if (c.disposition != Disposition::kXfail) continue;
    const size_t end = c.message.find("): ");  // "waived (FILE:LINE: reason): diagnosis"
    std::string why = end == std::string::npos ? c.message : c.message.substr(0, end + 1);
    if (why.size() > 160) why = why.substr(0, 157) + "...";
    s += "  " + c.name + ": " + one_line(why);
  }
  return s + "\n";
}

std::string summary_text(const std::vector<CaseResult>& results, const RunInfo& info, bool verbose) {
  std::set<std::string> backends;
  for (const CaseResult& r : results) backends.insert(r.backend);
  std::string s;
  for (const CaseResult& r : results) {
    if (!is_problem(r.disposition)) continue;
    if (r.disposition == Disposition::kXfail && !verbose) {
      s += xfail_line(r);
      continue;
    }
    // A case without a name goes by its file:line, given once.
    s += std::string(disposition_name(r.disposition)) + "  " + one_line(r.case_name) + "  [" + one_line(r.backend) +
         "]" + (r.case_name == r.source ? "" : "  " + one_line(r.source)) + "\n";
    s += file_on_one_line(diagnosis(r), source_file(r));
    if (!r.reproducer.empty()) s += "    reproduce: " + r.reproducer + "\n";
  }
  int width = 12;  // the backend column: as wide as the longest name
  for (const std::string& b : backends) width = std::max(width, static_cast<int>(std::min<size_t>(b.size(), 64)));
  char line[256];
  std::snprintf(line, sizeof line, "\n%-*s %7s %7s %10s %7s %7s %7s %7s\n", width, "backend", "passed", "failed",
                "mistrusted", "skipped", "invalid", "crashed", "timeout");
  s += line;
  for (const std::string& b : backends) {
    std::vector<CaseResult> mine;
    std::copy_if(results.begin(), results.end(), std::back_inserter(mine),
                 [&](const CaseResult& r) { return r.backend == b; });
    auto n = summary_counts(mine);
    std::snprintf(line, sizeof line, "%-*s %7d %7d %10d %7d %7d %7d %7d\n", width, b.c_str(), n["passed"], n["failed"],
                  n["mistrusted"], n["skipped"], n["invalid"], n["crashed"], n["timeout"]);
    s += line;
  }
  s += skip_reasons(results);
  s += backends_text(results, info);
  s += passed_over_line(info);
  std::snprintf(line, sizeof line, "%zu results in %.1f s\n", results.size(), info.seconds);
  return s + line;
}

namespace {

// One comment line of a reproducer: one_line's escapes, and the Unicode line breaks of
// YAML 1.1 (NEL, LS, PS), at which some readers and editors end a line, as \uXXXX.
std::string comment_line(std::string_view text) {
  std::string s = one_line(text);
  for (const auto& [raw, escaped] : {std::pair<std::string_view, std::string_view>{"\xc2\x85", "\\u0085"},
                                     {"\xe2\x80\xa8", "\\u2028"},
                                     {"\xe2\x80\xa9", "\\u2029"}}) {
    for (size_t at = s.find(raw); at != std::string::npos; at = s.find(raw, at + escaped.size())) {
      s.replace(at, raw.size(), escaped);
    }
  }
  return "#" + s + "\n";
}

}  // namespace

std::string failure_yaml(const CaseResult& r) {
  if (r.reproducer.empty()) return {};
  std::string s = comment_line(" kcheck reproducer: " + r.case_name + " on " + r.backend + " (" + r.source +
                               "): " + std::string(disposition_name(r.disposition)));
  const std::string d = file_on_one_line(diagnosis(r), source_file(r));
  size_t start = 0;
  while (start < d.size()) {
    const size_t end = d.find('\n', start);
    // Each line of a message stays a comment, whatever the message holds.
    s += comment_line(std::string_view(d).substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return s + r.reproducer + "\n";
}

int exit_code(const std::vector<CaseResult>& results) {
  // Invalid input wins over failures: a CI gate on exit 2 must see a case file that
  // was never checked, whatever else failed.
  bool failed = false;
  for (const CaseResult& r : results) {
    if (r.disposition == Disposition::kInvalid) return 2;
    failed = failed || r.disposition == Disposition::kFailed || r.disposition == Disposition::kMistrusted ||
             r.disposition == Disposition::kXpass || r.disposition == Disposition::kCrashed ||
             r.disposition == Disposition::kTimeout;
  }
  return failed ? 1 : 0;
}

}  // namespace kc
