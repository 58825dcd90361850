// The max pool module's YAML for a stack's layer: its section's fields read and written.
#pragma once

#include <string>

#include "io/case_yaml.h"
#include "kc/case.h"
#include "kc/status.h"

namespace kc::io {

StatusOr<MaxPoolParams> read_maxpool_fields(const Value& v, size_t rank);
std::string maxpool_flow(const MaxPoolParams& p);

}  // namespace kc::io
