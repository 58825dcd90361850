// The absolute-value pass that the `bound` tolerance (judge/tolerance.h) takes its
// magnitudes from: the oracle run on |inputs|, per element the sum of |a_i * b_i|.
#pragma once

#include <optional>

#include "backend/invoke.h"
#include "kc/backend.h"
#include "kc/case.h"

namespace kc {

// The oracle on absolute values: per element the sum of |a_i * b_i| its value is made
// of (y from |x|, |w|, |b|; dx from |dy|, |w|; dw from |x|, |dy|; db from |dy|; for a
// pool, |y| and dx from |dy| through the oracle's indices). Feeds the `bound` tolerance.
OpOutputs absolute_pass(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref);
// The same, for judging `backend`: one that declares a transform algorithm spreads its
// rounding error over each output tile, so every magnitude is its plane's largest
// (judge/transform_bound.h).
OpOutputs absolute_pass_for(const Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in,
                            const OpOutputs& ref);
// absolute_pass_for from absolute_pass's result.
OpOutputs absolute_pass_for(const Backend& backend, const OpGeometry& g, OpOutputs abs);

// The absolute pass over the finite inputs only (every NaN and infinity taken as 0): per
// element how large the finite part of its sum can grow in some order, which decides
// whether a correct kernel's accumulator may overflow on the way and meet an infinity
// there (judge/tolerance.h, ToleranceSpec::finite_terms). Empty when every input is
// finite: absolute_pass is then that part itself.
std::optional<OpOutputs> finite_part_pass(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref);

// Which elements a non-finite input reaches: the absolute pass with every finite input
// taken as 1 and every NaN or infinity as kNonfiniteMark, so that an element is at least
// kNonfiniteReached (judge/tolerance.h) exactly where one of its terms has a non-finite
// factor (a sum of finite terms' ones stays below: n is far smaller). Empty when every
// input is finite.
std::optional<OpOutputs> nonfinite_reach_pass(const Case& c, const OpGeometry& g, const OpInputs& in,
                                              const OpOutputs& ref);

// Both passes of the inputs' non-finite values, as a check context takes them
// (checks/checks.h, with_nonfinite_passes); both empty when every input is finite.
struct NonfinitePasses {
  std::optional<OpOutputs> finite_abs;  // finite_part_pass
  std::optional<OpOutputs> reach;       // nonfinite_reach_pass
};
NonfinitePasses nonfinite_passes(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref);

}  // namespace kc
