// Internal to kc_core: the single-op rules of validate() (validate.cpp) that a stack's
// validation (ops/stack_validate.cpp) applies to the fields of its layer.
#pragma once

#include <string>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc {

// A conv's fields under the name f ("conv", "stack.layer.conv"): sizes, kernel, stride,
// dilation, groups and padding against the input's rank and the limits.
Status check_conv_fields(const std::string& f, const ConvParams& p, const InputSpec& in, const Limits& limits);

// A max pool's fields ("maxpool.*"): kernel, stride, dilation and padding.
Status check_pool_fields(const MaxPoolParams& p, const InputSpec& in, const Limits& limits);

// `tolerance: exact` where a correct kernel meets it (validate.cpp says where); pool:
// the max pool's geometry, or null for a conv (bias: whether it has one) or a stack.
Status check_exact_tolerance(const Case& c, const PoolGeometry* pool, bool bias);

}  // namespace kc
