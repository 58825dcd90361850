// backward: the backend's dx, dw, db against the oracle's backward within the tolerance
// model. For a max pool the expected dx routes dy through the backend's own indices
// when the tie rule is `any` (the gradient must go where the kernel's index points).
// For conv_bias_relu, a nonzero pre-activation z within its own error bound of 0 may
// land on either side of the relu in a correct kernel: its dy is left out of the
// expected gradient and its whole possible contribution is added to the allowed error;
// where that contribution swamps one gradient, a pass is MISTRUSTED (a failure stands).
#include <cmath>

#include "check_list.h"
#include "common.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "relu_ambiguity.h"

namespace kc::checks {

std::string backward_not_applicable(const CheckContext& ctx) {
  return ctx.stack != nullptr ? stack_backward_not_applicable(ctx) : std::string();
}

CheckResult backward_run(const CheckContext& ctx) {
  if (ctx.stack != nullptr) return stack_backward_run(ctx);
  CheckResult r = make_result("backward", Disposition::kPassed);
  std::string why;
  auto compare = [&](const char* name, const Tensor& cand, const Tensor& ref, const Tensor& abs, const Tensor* slack) {
    compare_tensors(name, cand, ref, &abs, tolerance_for(ctx, name), r, slack);
    if (why.empty()) why = distrust_output(ctx.geo, name, ref);
  };
  if (const ConvGeometry* g = conv_geo(ctx); g && is_fused(ctx.c)) {
    const FusedExpectation e = fused_expectation(ctx, *g);
    if (std::string all = e.swamp.all(); !all.empty()) return make_result("backward", Disposition::kMistrusted, all);
    const bool amb = e.ambiguous > 0;
    compare("dx", ctx.cand.dx, amb ? e.want.dx : ctx.ref.dx, ctx.abs.dx, amb ? &e.slack.dx : nullptr);
    compare("dw", ctx.cand.dw, amb ? e.want.dw : ctx.ref.dw, ctx.abs.dw, amb ? &e.slack.dw : nullptr);
    compare("db", ctx.cand.db, amb ? e.want.db : ctx.ref.db, ctx.abs.db, amb ? &e.slack.db : nullptr);
    if (amb)
      r.message +=
          std::to_string(e.ambiguous) + " pre-activations within rounding of 0 may take either side of relu'; ";
    if (why.empty()) why = e.swamp.one();  // judged beyond its slack, but a wrong one could hide in it
  } else if (const ConvGeometry* cg = conv_geo(ctx)) {
    compare("dx", ctx.cand.dx, ctx.ref.dx, ctx.abs.dx, nullptr);
    compare("dw", ctx.cand.dw, ctx.ref.dw, ctx.abs.dw, nullptr);
    if (cg->bias) compare("db", ctx.cand.db, ctx.ref.db, ctx.abs.db, nullptr);
  } else {
    const PoolGeometry& pg = *pool_geo(ctx);
    Tensor want = ctx.ref.dx;
    if (pg.tie == TieRule::kAny && ctx.cand.indices) {
      auto routed = ref::maxpool_backward(pg, ctx.in.dy, ctx.cand.indices);
      if (routed.ok()) want = std::move(routed).value();
    }
    compare("dx", ctx.cand.dx, want, ctx.abs.dx, nullptr);
  }
  if (r.disposition == Disposition::kPassed && !why.empty()) {
    return make_result("backward", Disposition::kMistrusted, why);
  }
  return r;
}

}  // namespace kc::checks
