// FastFailure (fast_failure.h).
#include "run/fast_failure.h"

namespace kc {

std::string FastFailure::skip_reason(const CaseResult& label) const {
  if (max_failures_ > 0 && failures_ >= max_failures_) {
    return "not run: --max-failures " + std::to_string(max_failures_) + " reached";
  }
  const auto it = crashes_in_a_row_.find(label.backend);
  if (max_crashes_ > 0 && it != crashes_in_a_row_.end() && it->second >= max_crashes_) {
    return "not run: " + std::to_string(it->second) + " cases in a row crashed or timed out on " + label.backend +
           " (--max-crashes " + std::to_string(max_crashes_) + ")";
  }
  return {};
}

void FastFailure::observe(const CaseResult& r) {
  const Disposition d = r.disposition;
  failures_ += d == Disposition::kFailed || d == Disposition::kMistrusted || d == Disposition::kCrashed ||
               d == Disposition::kTimeout;
  // A skipped result says nothing about the backend's health; an invalid case file runs nowhere.
  if (d == Disposition::kSkipped || d == Disposition::kInvalid) return;
  int& row = crashes_in_a_row_[r.backend];
  row = d == Disposition::kCrashed || d == Disposition::kTimeout ? row + 1 : 0;
}

}  // namespace kc
