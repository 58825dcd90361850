// The conv module's part of the checks (conv_bias_relu's too: one geometry): what its
// dx can be judged on, the shapes of its outputs, and how many terms each output sums.
#include <string>

#include "checks/common.h"
#include "judge/tolerance.h"
#include "ops/op_module.h"

namespace kc::checks {

// dx is judged on the elements some window reads (conv_input_read).
std::string distrust_dx(const ConvGeometry& g, const Tensor& ref, std::string_view source) {
  return distrust_counted("dx", ref, source, conv_input_read(g));
}

void expect_shapes(const ConvGeometry& g, const CheckContext& ctx, bool backward, CheckResult& r) {
  expect_shape("y", ctx.cand.y.shape, g.y_shape(), r, &g.spatial);
  if (!backward) return;
  expect_shape("dx", ctx.cand.dx.shape, g.x_shape(), r);
  expect_shape("dw", ctx.cand.dw.shape, g.w_shape(), r);
  if (g.bias) expect_shape("db", ctx.cand.db.shape, g.b_shape(), r);
}

// y: a group's channels times the taps, and the bias; dx: each output channel's taps, as
// often as padding copies an element; dw and db: every output position of every sample.
void tolerance_terms(const ConvGeometry& g, std::string_view tensor, ToleranceSpec& s) {
  const int64_t taps = g.spatial.kernel_count();
  if (tensor == "y") s.n = g.in_per_group() * taps + 1;
  if (tensor == "dx") s.n = g.out_per_group() * taps * max_pad_copies(g);
  if (tensor == "dw" || tensor == "db") s.n = g.batch * g.spatial.out_count();
}

}  // namespace kc::checks
