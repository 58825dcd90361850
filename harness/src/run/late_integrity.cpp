// fail_integrity.
#include "run/late_integrity.h"

#include <utility>

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
  CheckResult added;
  added.name = "integrity";
  added.disposition = Disposition::kFailed;
  added.message = text;
  r.checks.push_back(std::move(added));
}

}  // namespace kc
