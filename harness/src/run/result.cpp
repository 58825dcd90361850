// Disposition names and the roll-up of checks into a case result.
#include "kc/result.h"

namespace kc {

std::string_view disposition_name(Disposition d) {
  switch (d) {
    case Disposition::kPassed:
      return "PASSED";
    case Disposition::kFailed:
      return "FAILED";
    case Disposition::kMistrusted:
      return "MISTRUSTED";
    case Disposition::kSkipped:
      return "SKIPPED";
    case Disposition::kInvalid:
      return "INVALID";
    case Disposition::kCrashed:
      return "CRASHED";
    case Disposition::kTimeout:
      return "TIMEOUT";
    case Disposition::kXfail:
      return "XFAIL";
    case Disposition::kXpass:
      return "XPASS";
  }
  return "?";
}

std::string_view disposition_key(Disposition d) {
  switch (d) {
    case Disposition::kPassed:
      return "passed";
    case Disposition::kFailed:
      return "failed";
    case Disposition::kMistrusted:
      return "mistrusted";
    case Disposition::kSkipped:
      return "skipped";
    case Disposition::kInvalid:
      return "invalid";
    case Disposition::kCrashed:
      return "crashed";
    case Disposition::kTimeout:
      return "timeout";
    case Disposition::kXfail:
      return "xfail";
    case Disposition::kXpass:
      return "xpass";
  }
  return "?";
}

static int severity(Disposition d) {
  switch (d) {
    case Disposition::kSkipped:
      return 0;
    case Disposition::kPassed:
      return 1;
    case Disposition::kXfail:
      return 2;
    case Disposition::kInvalid:
      return 3;
    case Disposition::kMistrusted:
      return 4;
    case Disposition::kXpass:
      return 5;
    case Disposition::kFailed:
      return 6;
    case Disposition::kTimeout:
      return 7;
    case Disposition::kCrashed:
      return 8;
  }
  return 0;
}

Disposition worse(Disposition a, Disposition b) { return severity(a) >= severity(b) ? a : b; }

void roll_up(CaseResult& r) {
  if (r.checks.empty()) return;
  Disposition d = Disposition::kSkipped;
  for (CheckResult& c : r.checks) {
    // Checks join their parts with "; " as they go: the last separator ends nothing.
    while (!c.message.empty() && (c.message.back() == ' ' || c.message.back() == ';')) c.message.pop_back();
    d = worse(d, c.disposition);
  }
  r.disposition = d;
}

const CheckResult* find_check(const CaseResult& r, std::string_view name) {
  for (const CheckResult& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace kc
