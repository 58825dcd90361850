// What integrity can only see once a case's checks are done: outputs of the
// candidate's first call that changed after the call returned (a thread still writing:
// changed_after_return in backend/invoke.h), and calls that left the floating-point
// environment changed (backend/candidate_call.h).
// Either is a FAILED integrity, added to the case whatever checks it asked for: every
// verdict taken while it happened is in doubt.
#pragma once

#include <string>
#include <vector>

#include "kc/result.h"

namespace kc {

// Fails r's integrity check with the findings (adds the check when the case did not run
// it), before the case is rolled up. Nothing when `findings` is empty.
void fail_integrity(const std::vector<std::string>& findings, CaseResult& r);

}  // namespace kc
