// Internal to kc_core: the single-op rules of validate() (validate.cpp) that a stack's
// validation (ops/stack_validate.cpp) applies to the fields of its layer.
#pragma once

#include <string>
#include <vector>

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

// `tolerance: exact` where a correct kernel meets it (validate.cpp says where): `inputs`
// the case's inputs but dy ({"x", "w", "b"} for a conv with a bias or a stack); `pool`
// a max pool's geometry, `avg` an average pool's, or null.
Status check_exact_tolerance(const Case& c, std::vector<std::string> inputs, const PoolGeometry* pool,
                             const AvgPoolGeometry* avg = nullptr);

}  // namespace kc
