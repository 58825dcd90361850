// Whether a generated case can judge a kernel (see oracle_trust.h).
#include "gen/oracle_trust.h"

#include "kc/runner.h"

namespace kc::gen {

std::string mistrusted_on_oracle(const Case& c, Backend& oracle) {
  const CaseResult r = check_case(c, oracle);
  if (r.disposition != Disposition::kMistrusted) return {};
  for (const CheckResult& check : r.checks) {
    if (check.disposition == Disposition::kMistrusted) return check.name + ": " + check.message;
  }
  return r.message;
}

}  // namespace kc::gen
