// The conv module's YAML for the modules built on a conv (conv_bias_relu, a stack's
// layer): its section's fields read and written.
#pragma once

#include <string>

#include "io/case_yaml.h"
#include "kc/case.h"
#include "kc/status.h"

namespace kc::io {

// `fused`: the section of a conv_bias_relu, whose bias is always there.
StatusOr<ConvParams> read_conv_fields(const Value& v, size_t rank, bool fused);
std::string conv_flow(const ConvParams& p);

}  // namespace kc::io
