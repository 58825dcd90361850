// Applying waivers to a run's results: a failed check a waiver names becomes XFAIL (the
// case XFAIL when nothing else failed), a waived check that passed becomes XPASS (which
// fails the run: the waiver is stale). Expired waivers are ignored; unmatched ones named.
#pragma once

#include <string>
#include <vector>

#include "io/waiver_reader.h"
#include "kc/result.h"

namespace kc {

struct WaiverOutcome {
  std::vector<std::string> expired;    // "FILE:LINE (expired DATE): reason"
  std::vector<std::string> unmatched;  // "FILE:LINE: case C, backend B, check K", of a case in the run
  int unmatched_elsewhere = 0;         // waivers that matched nothing, for cases or backends not in the run
};

// `today` is YYYY-MM-DD (UTC); a waiver whose `expires` is before it does not apply.
WaiverOutcome apply_waivers(std::vector<CaseResult>& results, const std::vector<Waiver>& waivers,
                            const std::string& today);

// The lines the run's summary prints about them (empty when there are no waivers).
std::string waivers_text(const WaiverOutcome& outcome, const std::vector<CaseResult>& results, bool any);

}  // namespace kc
