// fail_integrity.
#include "run/late_integrity.h"

#include "checks/checks.h"

namespace kc {

void fail_integrity(const std::vector<std::string>& findings, CaseResult& r) {
  if (findings.empty()) return;
  std::string text;
  for (const std::string& f : findings) text += (text.empty() ? "" : "; ") + f;
  for (CheckResult& c : r.checks) {
    if (c.name != "integrity") continue;
    const bool failed = c.disposition == Disposition::kFailed;
    c.disposition = Disposition::kFailed;
    c.message = failed && !c.message.empty() ? text + "; " + c.message : text;
    return;
  }
  r.checks.push_back(make_result("integrity", Disposition::kFailed, text));
}

}  // namespace kc
