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
  int other_cpu = 0;                   // waivers for a CPU flag this CPU lacks: not applied
  int intermittent_passed = 0;         // checks an intermittent waiver names that passed this time
};

// `today` is YYYY-MM-DD (UTC); a waiver whose `expires` is before it does not apply, nor
// one whose `cpu` flag is not among `cpu_flags` (a library's kernels, and so its known
// bugs, may depend on the instructions the CPU has).
WaiverOutcome apply_waivers(std::vector<CaseResult>& results, const std::vector<Waiver>& waivers,
                            const std::string& today, const std::vector<std::string>& cpu_flags);
// The same on this machine's CPU flags (this_cpu_flags).
WaiverOutcome apply_waivers(std::vector<CaseResult>& results, const std::vector<Waiver>& waivers,
                            const std::string& today);

// The flags of this machine's CPU as /proc/cpuinfo lists them (empty where it cannot be
// read: then no waiver with a `cpu` applies).
const std::vector<std::string>& this_cpu_flags();

// The lines the run's summary prints about them (empty when there are no waivers).
std::string waivers_text(const WaiverOutcome& outcome, const std::vector<CaseResult>& results, bool any);

}  // namespace kc
