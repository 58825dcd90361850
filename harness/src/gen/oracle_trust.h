// Whether a generated case can judge a kernel: the oracle run as a candidate on it
// (make_reference_as_candidate) passes every check, or some check calls its own pass
// MISTRUSTED (a sum that cancels below its rounding bound, say, where a kernel writing
// zeros would pass too). `kcheck gen` leaves such a case out and the boundary sweep
// gives it data that can judge.
#pragma once

#include <string>

#include "kc/backend.h"
#include "kc/case.h"

namespace kc::gen {

// Why a candidate's results on the valid case c could not be trusted ("check: reason"),
// or empty when they can.
std::string mistrusted_on_oracle(const Case& c, Backend& oracle);

}  // namespace kc::gen
