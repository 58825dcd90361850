// The max pool module's part of the checks: what its dx can be judged on, the shapes of
// its outputs (indices included), and how many terms each output sums.
#include <string>

#include <utility>
#include "checks/common.h"
#include "checks/padding_coverage.h"
#include "checks/padding_run.h"
#include "checks/shape_mutations.h"
#include "judge/tolerance.h"
#include "kc/ref/maxpool.h"
#include "ops/op_module.h"

namespace kc::checks {

// dx holds dy at the argmax positions only: mistrusted only when all zero.
std::string distrust_dx(const PoolGeometry&, const Tensor& ref, std::string_view source) {
  return distrust("dx", ref, true, source);
}

void expect_shapes(const PoolGeometry& g, const CheckContext& ctx, bool backward, CheckResult& r) {
  expect_shape("y", ctx.cand.y.shape, g.y_shape(), r, &g.spatial, g.ceil_mode);
  if (ctx.cand.indices) expect_shape("indices", ctx.cand.indices->shape, g.y_shape(), r, &g.spatial, g.ceil_mode);
  if (backward) expect_shape("dx", ctx.cand.dx.shape, g.x_shape(), r);
}

// y is a selection (exact); dx adds the dy of every window whose argmax an element is.
void tolerance_terms(const PoolGeometry& g, std::string_view tensor, ToleranceSpec& s) {
  s.n = tensor == "dx" ? g.spatial.kernel_count() : 1;
}

// dx against the oracle's, or with tie rule `any` dy routed through the backend's own
// indices (the gradient must go where the kernel's index points).
void compare_gradients(const PoolGeometry& g, const CheckContext& ctx, const GradientCompare& compare, CheckResult&,
                       std::string&) {
  Tensor want = ctx.ref.dx;
  if (g.tie == TieRule::kAny && ctx.cand.indices) {
    auto routed = ref::maxpool_backward(g, ctx.in.dy, ctx.cand.indices);
    if (routed.ok()) want = std::move(routed).value();
  }
  compare("dx", ctx.cand.dx, want, ctx.abs.dx);
}

void add_shape_mutations(std::vector<ShapeMutation>& m, const MaxPoolParams& p) { add_pool_mutations(m, p); }

// Padding (checks/padding.cpp): -inf padding made explicit is the same pool; its indices
// must map back, and coverage is checked on distinct negative inputs.
bool padded_run_judges(const PoolGeometry&) { return true; }
void compare_padded_run(const PoolGeometry&, const CheckContext& ctx, const Padded& pd, const OpOutputs& run,
                        rules::Findings& f, CheckResult&) {
  compare_pool_indices(ctx, pd, run, f);
}
void check_coverage(const PoolGeometry& g, const CheckContext& ctx, rules::Findings& f, std::string& notes) {
  rules::check_pool_coverage(ctx, g, f, notes);
}

}  // namespace kc::checks
