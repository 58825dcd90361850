// Internal to kc_core: the resource rules of validate() (validate_limits.cpp), applied
// after the field rules, so that every size is within Limits::max_size; a stack's sum
// of work over its layers is the stack op's (ops/stack/stack_layers.h).
#pragma once

#include <string>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/status.h"

namespace kc {

// The host memory estimate (estimate_case_bytes) against limits.max_case_bytes:
// resource_exhausted naming what needs it.
Status check_memory(const Case& c, const Limits& limits);

// The work of one forward of a single-op case against limits.max_op_work.
Status check_work(const Case& c, const Limits& limits);

// Multiply-adds (conv) or comparisons (max pool) of one forward of a single-op case, in
// double (no overflow).
double op_work(const Case& c);

// A count to three significant digits ("6.87e+10"), as the work caps' errors write it.
std::string count_text(double v);

// The environment variable that raises Limits::max_op_work.
inline constexpr const char* kOpWorkVariable = "KC_MAX_OP_WORK";

}  // namespace kc
