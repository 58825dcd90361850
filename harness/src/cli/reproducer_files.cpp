// The failure reproducers kcheck run writes next to its report: one YAML file per case
// that did not pass, named for what failed (NNN-CASE.BACKEND.CHECK.yaml, each part cut so
// that any name fits the file system), its first line the command that runs it again,
// every argument shell-quoted on that one line.
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "cli.h"
#include "kc/report.h"
#include "kc/runner.h"

namespace kc::cli {
namespace {

// Lower-case letters, digits and '-' from `text`, at most `width` of them.
std::string slug(const std::string& text, size_t width) {
  std::string s;
  for (unsigned char c : text) {
    if (s.size() >= width) break;
    if (std::isalnum(c))
      s += static_cast<char>(std::tolower(c));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "case" : s;
}

// The first check that did not pass, or the case's disposition when none did.
std::string what_failed(const CaseResult& r) {
  for (const CheckResult& c : r.checks) {
    if (c.disposition != Disposition::kPassed && c.disposition != Disposition::kSkipped &&
        c.disposition != Disposition::kXfail) {
      return c.name;
    }
  }
  return std::string(disposition_key(r.disposition));
}

// At most `width` bytes of `text`, not cut inside a UTF-8 character.
std::string cut(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t end = width;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// A name as one part of a file name: no folder separator, blank or control character.
std::string file_part(const std::string& text, size_t width) {
  std::string part = cut(text, width);
  for (char& c : part) {
    if (c == '/' || c == ' ' || std::iscntrl(static_cast<unsigned char>(c))) c = '_';
  }
  return part;
}

// The parts' widths: with the number's up to 11 bytes, the dots and ".yaml", 187 bytes.
constexpr size_t kCaseWidth = 40, kBackendWidth = 96, kCheckWidth = 32;
static_assert(12 + kCaseWidth + 1 + kBackendWidth + 1 + kCheckWidth + 5 <= kMaxReproducerName);

}  // namespace

std::string reproducer_name(int n, const CaseResult& r) {
  char number[16];
  std::snprintf(number, sizeof number, "%03d-", n);
  return number + slug(r.case_name, kCaseWidth) + "." + file_part(r.backend, kBackendWidth) + "." +
         file_part(what_failed(r), kCheckWidth) + ".yaml";
}

namespace {

bool needs_reproducer(const CaseResult& r) {
  return !r.reproducer.empty() && r.disposition != Disposition::kPassed && r.disposition != Disposition::kSkipped &&
         r.disposition != Disposition::kXfail;  // a known failure (XFAIL) needs no new reproducer
}

const std::string* reproducer_file(const CaseResult& r) {
  for (const auto& [k, v] : r.fields) {
    if (k == "reproducer_file") return &v;
  }
  return nullptr;
}

}  // namespace

void name_reproducers(const std::string& folder, std::vector<CaseResult>& results) {
  int n = 0;
  for (CaseResult& r : results) {
    if (needs_reproducer(r)) {
      r.fields.emplace_back("reproducer_file", (std::filesystem::path(folder) / reproducer_name(++n, r)).string());
    }
  }
}

namespace {

std::vector<std::string>& rerun_python() {
  static std::vector<std::string> modules;
  return modules;
}

// The reproducer's first line: the command that reruns it, every argument quoted for a
// POSIX shell (a name may hold blanks, quotes, `$` or a newline), on one comment line.
std::string rerun_line(const std::string& path, const std::string& backend, const std::vector<std::string>& plugins) {
  // A relative path that starts with '-' would be read as an option.
  const std::string file = path.starts_with('-') ? "./" + path : path;
  std::string s = "# rerun: kcheck run " + shell_quote(file) + " --backend " + shell_quote(backend);
  for (const std::string& p : plugins) s += " --plugin " + shell_quote(p);
  for (const std::string& m : rerun_python()) s += " --python " + shell_quote(m);
  std::string skipped;  // the run's --skip-checks: the rerun judges as it did
  for (const std::string& c : skipped_checks()) skipped += (skipped.empty() ? "" : ",") + c;
  if (!skipped.empty()) s += " --skip-checks " + shell_quote(skipped);
  return s + "\n";
}

}  // namespace

void set_rerun_python_modules(std::vector<std::string> modules) { rerun_python() = std::move(modules); }

bool write_failures(const std::string& folder, const std::vector<CaseResult>& results,
                    const std::vector<std::string>& plugins) {
  int n = 0, written = 0;
  for (const CaseResult& r : results) {
    const std::string* path = reproducer_file(r);
    if (path == nullptr) continue;
    ++n;
    if (const std::string why = write_text_file(*path, rerun_line(*path, r.backend, plugins) + failure_yaml(r));
        why.empty()) {
      ++written;
    } else {
      std::fprintf(stderr, "kcheck: cannot write the failure reproducer %s: %s\n", terminal_safe(*path).c_str(),
                   why.c_str());
    }
  }
  if (written) std::printf("%d failure reproducers in %s\n", written, terminal_safe(folder).c_str());
  return written == n;
}

}  // namespace kc::cli
