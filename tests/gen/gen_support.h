// Shared by the generator tests: how RapidCheck prints a Case (its one-line
// reproducer), and the op's field prefix in validate() messages.
#pragma once

#include <ostream>
#include <string>

#include "kc/case.h"
#include "kc/case_io.h"
#include "gen/gen.h"

namespace kc {

inline void showValue(const Case& c, std::ostream& os) { os << case_to_one_line(c); }

namespace gen {
inline void showValue(const InvalidCase& c, std::ostream& os) {
  os << "rule " << c.rule << ", error \"" << c.error << "\"\n" << c.yaml;
}
}  // namespace gen

namespace test {

inline bool is_pool(const Case& c) { return std::holds_alternative<MaxPoolParams>(c.op); }
inline bool is_fused(const Case& c) { return std::holds_alternative<ConvBiasReluParams>(c.op); }
inline const ConvParams& conv_of(const Case& c) {
  return is_fused(c) ? std::get<ConvBiasReluParams>(c.op).conv : std::get<ConvParams>(c.op);
}

}  // namespace test
}  // namespace kc
