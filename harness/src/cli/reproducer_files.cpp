// The failure reproducers kcheck run writes next to its report: one YAML file per case
// that did not pass, named for what failed (NNN-CASE.BACKEND.CHECK.yaml), its first line
// the command that runs it again.
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "cli.h"
#include "kc/report.h"

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

}  // namespace

std::string reproducer_name(int n, const CaseResult& r) {
  char number[16];
  std::snprintf(number, sizeof number, "%03d-", n);
  std::string backend = r.backend;
  for (char& c : backend) {
    if (c == '/' || c == ' ' || std::iscntrl(static_cast<unsigned char>(c))) c = '_';
  }
  return number + slug(r.case_name, 40) + "." + backend + "." + what_failed(r) + ".yaml";
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

bool write_failures(const std::string& folder, const std::vector<CaseResult>& results, const std::string& rerun) {
  int n = 0, written = 0;
  for (const CaseResult& r : results) {
    const std::string* path = reproducer_file(r);
    if (path == nullptr) continue;
    ++n;
    const std::string again = "# rerun: kcheck run " + *path + " --backend " + r.backend + rerun + "\n";
    if (const std::string why = write_text_file(*path, again + failure_yaml(r)); why.empty()) {
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
