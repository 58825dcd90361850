// Internal to kc_core: the resource rules of validate() (validate_limits.cpp), applied
// after the field rules, so that every size is within Limits::max_size.
#pragma once

#include <vector>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/status.h"
#include "stack/stack.h"

namespace kc {

// The host memory estimate (estimate_case_bytes) against limits.max_case_bytes:
// resource_exhausted naming what needs it.
Status check_memory(const Case& c, const Limits& limits);

// The work of one forward of a single-op case against limits.max_op_work.
Status check_work(const Case& c, const Limits& limits);

// The work of one forward through a stack, summed over its layers (unchecked_stack_layers),
// against the same cap; the error names stack.depth, the total and the largest layer.
Status check_stack_work(const Case& c, const std::vector<StackLayer>& layers, const Limits& limits);

}  // namespace kc
