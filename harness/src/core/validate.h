// Validation of a Case against the contract (docs/ops.md, docs/cases.md), run before
// anything is allocated. Errors name the field and the rule broken, e.g.
//   "conv.groups: 3 does not divide input.channels 8".
#pragma once

#include <cstdint>
#include <vector>

#include "kc/case.h"
#include "kc/status.h"

namespace kc {

struct Limits {
  // Host memory one case may need (see estimate_case_bytes). Beyond it the case is
  // refused with resource_exhausted instead of being allocated.
  int64_t max_case_bytes = int64_t{4} << 30;
  // Any single size (batch, channel count, extent, kernel, stride, dilation, padding).
  int64_t max_size = int64_t{1} << 31;
  // Multiply-adds (conv) or comparisons (max pool) of one forward, a stack's summed over
  // its layers: past 2^36 the f64 reference takes half a minute or more per forward, and
  // the checks run it dozens of times, so such a case could only time out (which reads
  // as if the kernel hung). KC_MAX_OP_WORK raises it (e.g. 1024G).
  double max_op_work = 68719476736.0;
};

// The default limits, with KC_MAX_CASE_BYTES from the environment when it is set to a
// usable value (a positive byte count with an optional K, M or G suffix).
Limits default_limits();

// Why KC_MAX_CASE_BYTES is set to a value default_limits() cannot use, as
// invalid_argument naming the variable; ok when it is unset, empty or usable. Tools ask
// before reading cases, so that a typo is refused instead of silently ignored.
Status limits_environment_problem();
// From now on default_limits() returns what the environment says now: kcheck reads the
// variables once, in its own process, before any worker or backend code runs (a backend
// that sets them in a worker changes nothing).
void freeze_limits_environment();

Status validate(const Case& c, const Limits& limits = default_limits());

// Estimated peak host bytes for checking the case: inputs, outputs and gradients as
// f64 for the reference and one candidate, plus the reference's padded input and
// im2col workspace, times the copies the checks hold at once (measured; validate.cpp).
// A stack: its layers' tensors. Saturates at INT64_MAX. The case must pass the field rules.
int64_t estimate_case_bytes(const Case& c);

// a * b, saturating at INT64_MAX for non-negative operands.
int64_t saturating_mul(int64_t a, int64_t b);
int64_t saturating_add(int64_t a, int64_t b);

}  // namespace kc
