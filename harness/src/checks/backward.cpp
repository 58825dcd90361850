// backward: the backend's dx, dw, db against the oracle's backward within the tolerance
// model. For a max pool the expected dx routes dy through the backend's own indices
// when the tie rule is `any` (the gradient must go where the kernel's index points).
#include "check_list.h"
#include "common.h"
#include "kc/ref/maxpool.h"

namespace kc::checks {

std::string backward_not_applicable(const CheckContext& ctx) {
  if (ctx.is_reference) return kOracleSelf();
  if (const PoolGeometry* g = pool_geo(ctx); g && g->mode == PoolMode::kInference) {
    return "inference mode keeps no indices, so there is no backward (argmax proves it is refused)";
  }
  return {};
}

CheckResult backward_run(const CheckContext& ctx) {
  if (!ctx.cand.forward.ok()) return call_failed("backward", "forward", ctx.cand.forward);
  if (!ctx.cand.backward.ok()) return call_failed("backward", "backward", ctx.cand.backward);
  CheckResult r = make_result("backward", Disposition::kPassed);
  std::string why;
  auto compare = [&](const char* name, const Tensor& cand, const Tensor& ref, const Tensor& abs) {
    compare_tensors(name, cand, ref, &abs, tolerance_for(ctx, name), r);
    if (why.empty()) why = distrust(name, ref, pool_geo(ctx) != nullptr);
  };
  if (const ConvGeometry* g = conv_geo(ctx)) {
    compare("dx", ctx.cand.dx, ctx.ref.dx, ctx.abs.dx);
    compare("dw", ctx.cand.dw, ctx.ref.dw, ctx.abs.dw);
    if (g->bias) compare("db", ctx.cand.db, ctx.ref.db, ctx.abs.db);
  } else {
    const PoolGeometry& pg = *pool_geo(ctx);
    Tensor want = ctx.ref.dx;
    if (pg.tie == TieRule::kAny && ctx.cand.indices) {
      auto routed = ref::maxpool_backward(pg, ctx.in.dy, ctx.cand.indices);
      if (routed.ok()) want = std::move(routed).value();
    }
    compare("dx", ctx.cand.dx, want, ctx.abs.dx);
  }
  if (r.disposition == Disposition::kPassed && !why.empty()) {
    return make_result("backward", Disposition::kMistrusted, why);
  }
  return r;
}

}  // namespace kc::checks
