// Internal to kc_core: the rules validate() (validate.cpp) shares with every op's module
// (ops/<op>.cpp): field sizes, empty outputs, inline tensor shapes, the accumulation
// and `tolerance: exact` rules, and the conv and max pool field rules a stack's layer
// reuses. Messages name the field: "conv.groups: 3 does not divide input.channels 8".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc {

// A size >= min and within limits.max_size.
Status check_size(const std::string& field, int64_t v, int64_t min, const Limits& limits);
// A per-dim list (kernel, stride, dilation): right length, every entry >= min.
Status check_dims(const std::string& field, const Dims& d, size_t rank, bool required, int64_t min,
                  const Limits& limits);
// Explicit padding: one pair per spatial dim, every entry a size >= 0.
Status check_padding_fields(const std::string& field, const PadSpec& pad, size_t rank, const Limits& limits);

// Every output extent >= 1, for every op with a window.
Status check_nonempty(const std::string& f, const SpatialGeometry& g);

// The inline tensors of `section` ("tensors" or "expected") have the shapes in `want`,
// and no other names.
Status check_tensor_shapes(const Case& c, const std::map<std::string, Dims>& want, const char* section);

// With `accumulation:` and the bound tolerance, the longest sum (n terms) keeps n * u < 1.
Status check_accumulation(const Case& c, int64_t longest_sum);

// Most windows sharing one input element along a dim, capped at 3; over all dims.
int64_t windows_sharing(const DimGeometry& d);
int64_t windows_sharing(const SpatialGeometry& g);

// `tolerance: exact` where a correct kernel meets it (validate.cpp says where): `inputs`
// the case's inputs but dy ({"x", "w", "b"} for a conv with a bias or a stack); `pool`
// a max pool's geometry, or null. An average pool adds its own rules first
// (ops/avgpool.cpp).
Status check_exact_tolerance(const Case& c, std::vector<std::string> inputs, const PoolGeometry* pool);

// A conv's fields under the name f ("conv", "stack.layer.conv"): sizes, kernel, stride,
// dilation, groups and padding against the input's rank and the limits (ops/conv.cpp).
Status check_conv_fields(const std::string& f, const ConvParams& p, const InputSpec& in, const Limits& limits);

// A max pool's fields ("maxpool.*"): kernel, stride, dilation and padding (ops/maxpool.cpp).
Status check_pool_fields(const MaxPoolParams& p, const InputSpec& in, const Limits& limits);

}  // namespace kc
