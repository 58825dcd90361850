// backward: the backend's dx, dw, db against the oracle's backward within the tolerance
// model. For a max pool the expected dx routes dy through the backend's own indices
// when the tie rule is `any` (the gradient must go where the kernel's index points).
// For conv_bias_relu, a nonzero pre-activation z within its own error bound of 0 may
// land on either side of the relu in a correct kernel: its dy is left out of the
// expected gradient and its whole possible contribution is added to the allowed error;
// where that contribution swamps one gradient, a pass is MISTRUSTED (a failure stands).
// Where z is NaN, relu'(z) is a convention: 0 (the oracle's) or dy (PyTorch's and
// oneDNN's) are both accepted unless the backend declares one, and the result says
// which the backend did.
#include <cmath>

#include "check_list.h"
#include "common.h"
#include "ops/op_module.h"
#include "relu_ambiguity.h"
#include "relu_grad_form.h"

namespace kc::checks {

std::string backward_not_applicable(const CheckContext& ctx) {
  return ctx.stack != nullptr ? stack_backward_not_applicable(ctx) : std::string();
}

namespace {

// conv_bias_relu's gradients against the expectation for one relu'(NaN) convention.
CheckResult judge_fused(const CheckContext& ctx, const ConvGeometry& g, bool nan_passes) {
  CheckResult r = make_result("backward", Disposition::kPassed);
  const FusedExpectation e = fused_expectation(ctx, g, nan_passes);
  if (std::string all = e.swamp.all(); !all.empty()) return make_result("backward", Disposition::kMistrusted, all);
  const bool own = e.want.dx.size() > 0;  // the oracle's gradients will not do
  const bool amb = e.ambiguous > 0;
  const char* names[] = {"dx", "dw", "db"};
  const Tensor* cand[] = {&ctx.cand.dx, &ctx.cand.dw, &ctx.cand.db};
  const Tensor* want[] = {&e.want.dx, &e.want.dw, &e.want.db};
  const Tensor* oracle[] = {&ctx.ref.dx, &ctx.ref.dw, &ctx.ref.db};
  const Tensor* abs[] = {&ctx.abs.dx, &ctx.abs.dw, &ctx.abs.db};
  const Tensor* slack[] = {&e.slack.dx, &e.slack.dw, &e.slack.db};
  std::string why;
  for (int t = 0; t < 3; ++t) {
    compare_tensors(names[t], *cand[t], own ? *want[t] : *oracle[t], abs[t], tolerance_for(ctx, names[t]), r,
                    amb ? slack[t] : nullptr);
    if (why.empty()) why = distrust_output(ctx.geo, names[t], *oracle[t]);
  }
  if (amb)
    r.message += std::to_string(e.ambiguous) + " pre-activations within rounding of 0 may take either side of relu'; ";
  if (why.empty()) why = e.swamp.one();  // judged beyond its slack, but a wrong one could hide in it
  if (r.disposition == Disposition::kPassed && !why.empty())
    return make_result("backward", Disposition::kMistrusted, why);
  return r;
}

// Both conventions where the backend declares none: the one that holds is reported.
CheckResult judge_fused_nan(const CheckContext& ctx, const ConvGeometry& g) {
  const ReluNanGrad declared = ctx.is_reference ? ReluNanGrad::kZero : ctx.backend.numerics().relu_nan_grad;
  const int64_t nans = nan_preactivations(relu_ambiguity(ctx, g));
  if (nans == 0) return judge_fused(ctx, g, false);
  const std::string count = std::to_string(nans) + " NaN pre-activation" + (nans == 1 ? "" : "s");
  CheckResult zero, dy;
  if (declared != ReluNanGrad::kPassDy) zero = judge_fused(ctx, g, false);
  if (declared != ReluNanGrad::kZero) dy = judge_fused(ctx, g, true);
  auto named = [&](CheckResult r, const std::string& what) {
    r.message = "relu'(NaN) " + what + " at " + count + "; " + r.message;
    return r;
  };
  if (declared == ReluNanGrad::kZero) return named(zero, "= 0 (declared)");
  if (declared == ReluNanGrad::kPassDy) return named(dy, "passes dy (declared)");
  if (zero.disposition != Disposition::kFailed) return named(zero, "= 0 (the oracle's convention; dy also accepted)");
  if (dy.disposition != Disposition::kFailed) return named(dy, "passes dy (PyTorch's and oneDNN's convention)");
  return named(zero, "explains nothing: neither 0 nor dy there gives these gradients");
}

}  // namespace

CheckResult backward_run(const CheckContext& ctx) {
  if (ctx.stack != nullptr) return stack_backward_run(ctx);
  if (const ConvGeometry* g = conv_geo(ctx); g && op_traits(ctx.c).relu) {
    CheckResult r = judge_fused_nan(ctx, *g);  // the diagnosis once, for the verdict reported
    if (r.disposition == Disposition::kFailed) r.message += relu_grad_times_zero(ctx, *g);
    return r;
  }
  CheckResult r = make_result("backward", Disposition::kPassed);
  std::string why;
  auto compare = [&](const char* name, const Tensor& cand, const Tensor& ref, const Tensor& abs) {
    compare_tensors(name, cand, ref, &abs, tolerance_for(ctx, name), r);
    if (why.empty()) why = distrust_output(ctx.geo, name, ref);
  };
  std::visit([&](const auto& g) { compare_gradients(g, ctx, compare, r, why); }, ctx.geo);
  if (r.disposition == Disposition::kPassed && !why.empty()) {
    return make_result("backward", Disposition::kMistrusted, why);
  }
  return r;
}

}  // namespace kc::checks
