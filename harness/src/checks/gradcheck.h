// The gradcheck check with its knobs exposed, for benchmarks and tests that need a
// given path or number of directions; the registered check uses the defaults.
#pragma once

#include <cstdint>

#include "checks/checks.h"

namespace kc::checks {

struct GradcheckOptions {
  // Cases with at most this many elements in x, w and b together have every element
  // differenced; larger ones use directions.
  int64_t full_limit = 512;
  // Such a case with at most this many outputs is checked as the full Jacobian: the
  // backward run once per output with a unit dy. With more, dy^T J for the case's dy.
  int64_t row_limit = 256;
  // Random directions u for v^T J u on large cases (at least 4 are used).
  int directions = 4;
};

// gradcheck_run with these options. Same contract: never throws a Status-worthy error,
// returns the disposition with its diagnosis.
CheckResult gradcheck_with(const CheckContext& ctx, const GradcheckOptions& options);

}  // namespace kc::checks
