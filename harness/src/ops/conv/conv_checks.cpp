// The conv module's part of the checks (conv_bias_relu's too: one geometry): what its
// dx can be judged on, the shapes of its outputs, and how many terms each output sums.
#include <string>

#include "checks/common.h"
#include "checks/padding_coverage.h"
#include "checks/padding_run.h"
#include "checks/padding_taps.h"
#include "checks/shape_mutations.h"
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

// dx and db against the oracle's; dw with the padding taps' share named
// (padding_taps.h).
void compare_gradients(const ConvGeometry& g, const CheckContext& ctx, const GradientCompare& compare, CheckResult& r,
                       std::string& why) {
  compare("dx", ctx.cand.dx, ctx.ref.dx, ctx.abs.dx);
  compare_padding_taps(ctx, "dw", ctx.cand.dw, ctx.ref.dw, ctx.abs.dw, dw_without_padding_taps(ctx, g, ctx.in.dy), r);
  if (why.empty()) why = distrust_output(ctx.geo, "dw", ctx.ref.dw);
  if (g.bias) compare("db", ctx.cand.db, ctx.ref.db, ctx.abs.db);
}

void add_shape_mutations(std::vector<ShapeMutation>& m, const ConvParams& p) {
  add_conv_mutations(m, p, [](Case& v) -> ConvParams& { return std::get<ConvParams>(v.op); });
}

// Padding (checks/padding.cpp): the explicitly padded run is the same conv; its dw, db
// and folded dx compared, and coverage on all-ones inputs.
bool padded_run_judges(const ConvGeometry&) { return true; }
void compare_padded_run(const ConvGeometry&, const CheckContext& ctx, const Padded& pd, const OpOutputs& run,
                        rules::Findings& f, CheckResult& r) {
  compare_conv_grads(ctx, pd, run, f, r);
}
void check_coverage(const ConvGeometry& g, const CheckContext& ctx, rules::Findings& f, std::string& notes) {
  rules::check_conv_coverage(ctx, g, f, notes);
}

}  // namespace kc::checks
