// When a run stops spending time: after --max-failures failed results, and on a backend
// after K crashed or timed-out results in a row (a hung backend would otherwise cost the
// full timeout on every case). The tasks not yet started then become SKIPPED, with why.
#pragma once

#include <map>
#include <string>

#include "kc/result.h"

namespace kc {

class FastFailure {
 public:
  // max_failures: 0 for no limit; max_crashes_in_a_row: 0 for no limit.
  FastFailure(int max_failures, int max_crashes_in_a_row)
      : max_failures_(max_failures), max_crashes_(max_crashes_in_a_row) {}

  // Why the task labelled so is not to be started, or empty.
  std::string skip_reason(const CaseResult& label) const;
  // Counts a finished task's result.
  void observe(const CaseResult& result);

 private:
  int max_failures_, max_crashes_;
  int failures_ = 0;
  std::map<std::string, int> crashes_in_a_row_;  // per backend
};

}  // namespace kc
