// Small helpers shared by the check files.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "checks/checks.h"
#include "kc/shape.h"

namespace kc::checks {

inline const ConvGeometry* conv_geo(const CheckContext& ctx) { return std::get_if<ConvGeometry>(&ctx.geo); }
inline const PoolGeometry* pool_geo(const CheckContext& ctx) { return std::get_if<PoolGeometry>(&ctx.geo); }

// The shape check's finding on one output: `got` against the contract's `want`, each
// dim's difference named when the ranks agree (`dims`: the op's spatial geometry;
// `ceil_mode`, a pool's, adds the rule that drops a window starting in the right padding).
void expect_shape(const std::string& tensor, const Dims& got, const Dims& want, CheckResult& r,
                  const SpatialGeometry* dims = nullptr, bool ceil_mode = false);

// The output tensor named "y", "dx", "dw" or "db".
inline const Tensor& output_named(const OpOutputs& o, std::string_view name) {
  return name == "y" ? o.y : name == "dx" ? o.dx : name == "dw" ? o.dw : o.db;
}

// A copy of the case for a run whose inputs the check passes itself (a padded input, a
// sample, a tile): no inline tensors or expectations. The check judges with the original
// case's tolerance; an `exact` one becomes an explicit tolerance of 0, since validate()'s
// rule that exact needs an integer fill or every input inline would refuse the copy. Any
// other stays as it is (a bound would bring back the accumulation rule that an explicit
// tolerance is exempt from).
inline Case with_own_inputs(Case c) {
  c.tensors.clear();
  c.expected.clear();
  c.data.zero.clear();  // the regions are in the inputs passed, and name the original shapes
  if (c.tolerance.kind == ToleranceKind::kExact) c.tolerance = Tolerance{ToleranceKind::kExplicit, 0.0, 0.0};
  return c;
}

// Whether a backend call's error says it does not implement the call (not a wrong answer).
inline bool unsupported(const Status& s) {
  return s.code() == StatusCode::kUnimplemented || s.code() == StatusCode::kUnavailable;
}

// SKIPPED for a backend that does not implement the call, FAILED for any other error.
inline CheckResult call_failed(std::string_view check, std::string_view what, const Status& s) {
  return make_result(check, unsupported(s) ? Disposition::kSkipped : Disposition::kFailed,
                     std::string(what) + " returned " + s.to_string());
}

// The inputs the backend wrote into, in the runner's run and in the runs of the check so
// far (invoke.h: InputWriteWatch), as "the backend wrote into its input w in
// conv_backward (...), so the runs this check compares read changed inputs"; empty when
// it wrote into none. A check comparing runs says this first: any other cause it would
// name is a guess.
inline std::string input_writes(const CheckContext& ctx) {
  std::vector<std::string> all = ctx.cand.wrote;
  for (const std::string& w : inputs_written_so_far()) {
    if (std::find(all.begin(), all.end(), w) == all.end()) all.push_back(w);
  }
  if (all.empty()) return {};
  std::string s = "the backend wrote into its input ";
  for (size_t i = 0; i < all.size(); ++i) s += (i ? ", " : "") + all[i];
  return s + " (inputs are const), so the runs this check compares read changed inputs";
}

}  // namespace kc::checks
