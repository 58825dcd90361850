// The max pool module's part of the checks: what its dx can be judged on, the shapes of
// its outputs (indices included), and how many terms each output sums.
#include <string>

#include "checks/common.h"
#include "judge/tolerance.h"
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

}  // namespace kc::checks
