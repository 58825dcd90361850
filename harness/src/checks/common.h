// Small helpers shared by the check files.
#pragma once

#include <string>

#include "kc/checks.h"
#include "kc/shape.h"

namespace kc::checks {

inline const ConvGeometry* conv_geo(const CheckContext& ctx) { return std::get_if<ConvGeometry>(&ctx.geo); }
inline const PoolGeometry* pool_geo(const CheckContext& ctx) { return std::get_if<PoolGeometry>(&ctx.geo); }

inline std::string kOracleSelf() {
  return "the oracle is not compared with itself; on the reference the self-checks are "
         "gradcheck, adjoint, golden, shape, argmax and padding";
}

// A copy of the case for a run whose inputs the check passes itself (a padded input, a
// sample, a tile): no inline tensors or expectations, and tolerance bound. The check
// judges with the original case's tolerance, and validate()'s rule that `exact` needs an
// integer fill or every input inline would otherwise refuse the copy.
inline Case with_own_inputs(Case c) {
  c.tensors.clear();
  c.expected.clear();
  c.tolerance = Tolerance{};
  return c;
}

// SKIPPED for a backend that does not implement the call, FAILED for any other error.
inline CheckResult call_failed(std::string_view check, std::string_view what, const Status& s) {
  const bool unsupported = s.code() == StatusCode::kUnimplemented || s.code() == StatusCode::kUnavailable;
  return make_result(check, unsupported ? Disposition::kSkipped : Disposition::kFailed,
                     std::string(what) + " returned " + s.to_string());
}

}  // namespace kc::checks
