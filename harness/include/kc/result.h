// Results of checking a case on a backend: dispositions (docs/checks.md, "Dispositions"), per-check
// results with their diagnostics, and the per case x backend result.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc {

// kXfail: a failure a waiver names (reported, not failing); kXpass: a waived failure that
// did not happen (fails the run, so that a stale waiver is noticed).
enum class Disposition { kPassed, kFailed, kMistrusted, kSkipped, kInvalid, kCrashed, kTimeout, kXfail, kXpass };

// Every disposition, in the order reports count them.
inline constexpr Disposition kAllDispositions[] = {
    Disposition::kPassed,  Disposition::kFailed,  Disposition::kMistrusted,
    Disposition::kSkipped, Disposition::kInvalid, Disposition::kCrashed,
    Disposition::kTimeout, Disposition::kXfail,   Disposition::kXpass};

std::string_view disposition_name(Disposition d);  // "PASSED", ...
std::string_view disposition_key(Disposition d);   // "passed", ... (report JSON keys)
// The worse of two dispositions for rolling checks up into a case:
// crashed > timeout > failed > xpass > mistrusted > invalid > xfail > passed > skipped.
Disposition worse(Disposition a, Disposition b);

// One coordinate where a candidate and the reference differ.
struct WorstPoint {
  std::string tensor;  // "y", "dx", ...
  std::vector<int64_t> index;
  double candidate = 0.0;
  double reference = 0.0;
  double bound = 0.0;  // allowed |candidate - reference| at this element
};

struct CheckResult {
  std::string name;  // a check name of docs/checks.md
  Disposition disposition = Disposition::kPassed;
  std::string message;           // the diagnosis: what differs, or why skipped / mistrusted
  double max_error_ratio = 0.0;  // max |error| / bound over compared elements (0 if none)
  double max_abs_error = 0.0;
  std::vector<WorstPoint> worst;  // a few worst coordinates, worst first
  double seconds = 0.0;           // wall time of the check, its own candidate calls included
};

struct CaseResult {
  std::string case_name;  // the case's name, or a name built from its file and line
  std::string source;     // file:line
  std::string backend;
  Disposition disposition = Disposition::kPassed;
  std::string message;  // for INVALID / SKIPPED / CRASHED / TIMEOUT: why
  std::vector<CheckResult> checks;
  std::string reproducer;  // the case as a one-line YAML
  double seconds = 0.0;
  // The case's structured fields for reports: op, dtype, input ([N, C, spatial...]).
  std::vector<std::pair<std::string, std::string>> fields;
};

// Rolls the checks up into r.disposition (an empty list stays as it is).
void roll_up(CaseResult& r);

// The check of that name in r, or null when it did not run.
const CheckResult* find_check(const CaseResult& r, std::string_view name);

}  // namespace kc
