// What a failing tensor's values show about the cause (judge/tolerance.cpp's
// compare_tensors appends each as a parenthesised note to its message): values the
// dtype cannot hold, subnormals flushed, sums formed in a 16-bit dtype, and what became
// of non-finite values. Each says nothing where the values do not show it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "judge/tolerance.h"

namespace kc::notes {

std::string not_stored_in(const ToleranceSpec& spec, const std::string& tensor, const Tensor& cand);
// bad: (candidate, reference) of every failing element.
std::string flushed(const ToleranceSpec& spec, int64_t failures, const std::vector<std::pair<double, double>>& bad);
// Whether one element's error fits sums formed in its 16-bit storage dtype.
bool within_narrow_sum(const ToleranceSpec& s, double err, double ref, double abs_sum, double slack);
std::string summed_narrow(const ToleranceSpec& spec, int64_t failures, int64_t narrow);
std::string nonfinite_changes(const ToleranceSpec& spec, const std::vector<std::pair<double, double>>& bad);

}  // namespace kc::notes
