// The state check across shapes (docs/checks.md, "state"): after the case, the backend
// instance that ran it runs variants of the case that change one field each (batch,
// extents, channels, out channels, dtype, stride, padding), then the case again. Each
// result must equal what a fresh instance gives on the same inputs (state_judge.h). A
// plan, workspace or cache kept under a key that misses a field hands the variant that
// changes it the case's plan; one that survives a call of another shape spoils the case.
#pragma once

#include <string>
#include <vector>

#include "checks.h"

namespace kc::checks {

// The case with one field changed: what changed ("batch 2 -> 3"), and the case.
struct ShapeVariant {
  std::string change;
  Case c;
};

// The variants of a single-op case that validate and that `backend` supports (none for
// a stack); their data is the case's fill and seed (inline tensors and zero regions,
// sized for the case, are dropped).
std::vector<ShapeVariant> shape_variants(const Case& c, Backend& backend);

// Runs the variants and the case again on ctx.backend and compares each with a fresh
// instance (ctx.fresh; without one nothing is run), bitwise or within the allowance
// (state_judge.h). A difference makes r FAILED, naming the variant; otherwise r.message
// says what was run.
void check_across_shapes(const CheckContext& ctx, bool bitwise, CheckResult& r);

}  // namespace kc::checks
