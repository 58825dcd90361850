// shape and backward for op: stack.
//  shape: every layer's extent from the contract (SAME keeps ceil(in/s) per layer),
//    the candidate's activations, y and dx against it; the message lists every layer's
//    extent and names the total erosion, so that silent erosion over depth is visible.
//  backward: the candidate's dx, dw, db (under its checkpoint policy) against the
//    oracle's in f64, normwise per tensor, allowing for sums in another order, for the
//    error the oracle itself makes when it stores every layer in the case dtype, and for
//    that rounding's variance propagated through the layers. Not run on the oracle, in
//    f16/bf16, or in f32 where the oracle's values do not force every relu and argmax.
// More on the method: docs/notes.md, section harness/src/stack/basic.cpp.
#include <algorithm>
#include <cmath>
#include <string>

#include "checks/check_list.h"
#include "checks/common.h"
#include "kc/ref/conv.h"
#include "stack/noise.h"

namespace kc::checks {
namespace {

std::string extent(const Dims& shape) {
  std::string s;
  for (size_t i = 2; i < shape.size(); ++i) s += (i > 2 ? "x" : "") + std::to_string(shape[i]);
  return s;
}

void expect_layer_shape(const std::string& what, const Dims& got, const Dims& want, CheckResult& r) {
  if (got == want) return;
  r.disposition = Disposition::kFailed;
  r.message += what + " has shape " + dims_to_string(got) + ", the contract says " + dims_to_string(want) + "; ";
}

// The unit of the rounding model (stack_noise.h): the accumulation's, and never below the
// storage dtype's, whose rounding of every layer's output and gradient the model puts
// within it (an f64 accumulator still stores f32).
double stack_unit(const Case& c) { return std::max(unit_roundoff(accumulation_of(c)), unit_roundoff(c.dtype)); }

PadKind padding_kind(const Case& c) { return std::get<StackParams>(c.op).conv.padding.kind; }

double norm(const Tensor& t) {
  double s = 0.0;
  for (double v : t.data) s += v * v;
  return std::sqrt(s);
}

constexpr double kOwnError = 8.0;
constexpr double kSigmas = 6.0;  // standard deviations of the propagated rounding error

double diff_norm(const Tensor& cand, const Tensor& ref) {
  if (cand.shape != ref.shape) return INFINITY;
  double s = 0.0;
  for (int64_t i = 0; i < ref.size(); ++i) s += (cand[i] - ref[i]) * (cand[i] - ref[i]);
  return std::sqrt(s);
}

// One gradient tensor's error over its allowance (see the top); 0 when both are 0.
struct Judged {
  double error = 0.0, allowed = 0.0;
  double ratio() const { return allowed > 0.0 ? error / allowed : (error == 0.0 ? 0.0 : INFINITY); }
};

// The allowance for sums in another order (see the top, without the own-error term):
// tol on the larger of the oracle's and its terms' magnitudes, plus kSigmas standard
// deviations of the propagated rounding error (variance: per element, stack_noise.h).
double order_allowance(const Tensor& ref, const Tensor& abs, const Tensor& variance, double tol) {
  double total_variance = 0.0;
  for (double v : variance.data) total_variance += v;
  return tol * std::max(norm(ref), norm(abs)) + kSigmas * std::sqrt(total_variance);
}

Judged judge(const Tensor& cand, const Tensor& ref, const Tensor& own, const Tensor& abs, const Tensor& variance,
             double tol) {
  const double own_error = own.shape == ref.shape ? diff_norm(own, ref) : 0.0;
  return {diff_norm(cand, ref), order_allowance(ref, abs, variance, tol) + kOwnError * own_error};
}

bool all_finite(const Tensor& t) {
  return std::all_of(t.data.begin(), t.data.end(), [](double v) { return std::isfinite(v); });
}

// Per layer, the magnitudes of the terms of its dx, dw and db sums (see the top), from
// the oracle's f64 run with its conv cotangents kept.
struct AbsGrads {
  Tensor dx;
  std::vector<Tensor> dw, db;
};

AbsGrads absolute_grads(const StackContext& s, const StackRun& run) {
  AbsGrads a;
  for (size_t l = 0; l < s.layers.size(); ++l) {
    ConvGeometry g = s.layers[l].conv;
    const Tensor& act = l == 0 ? s.in.x : s.ref.activations[l - 1];
    const ref::ConvGrads r = ref::conv_backward(g, absolute(act), absolute(s.in.w[l]), absolute(run.conv_grads[l]));
    if (l == 0) a.dx = r.dx;
    a.dw.push_back(r.dw);
    a.db.push_back(g.bias ? ref::conv_backward_bias(g, absolute(run.conv_grads[l])) : Tensor{});
  }
  return a;
}

// tol of the top: 32 * depth * sqrt(n) * u, n the longest reduction of any layer.
double order_tolerance(const CheckContext& ctx, double u) {
  int64_t n = 1;
  for (const StackLayer& l : ctx.stack->layers) {
    n = std::max({n, l.conv.reduction_length(), l.conv.batch * l.conv.spatial.out_count()});
  }
  return 32.0 * static_cast<double>(ctx.stack->layers.size()) * std::sqrt(static_cast<double>(n)) * u;
}

}  // namespace

namespace {

// The first gradient in which a and b differ by more than `allowed(name, want, abs,
// variance, x, y)`; "" when none does. `from_dw` skips dx (the caller proved it equal).
template <typename Allowed>
std::string first_apart(const CheckContext& ctx, const StackRun& a, const StackRun& b, double u, bool from_dw,
                        Allowed allowed_for) {
  const StackRun& ref = ctx.stack->ref;
  if (!ref.status.ok() || ref.conv_grads.size() != ctx.stack->layers.size()) {
    return "the oracle's run failed, so there is no allowance to judge by";
  }
  const AbsGrads abs = absolute_grads(*ctx.stack, ref);
  const GradVariance var = gradient_error_variance(*ctx.stack, u);
  auto at = [](const std::vector<Tensor>& v, size_t l) { return l < v.size() ? v[l] : Tensor{}; };
  // A gradient the oracle makes non-finite has no allowance.
  auto apart = [&](const std::string& name, const Tensor& x, const Tensor& y, const Tensor& want, const Tensor& abs_t,
                   const Tensor& variance) -> std::string {
    if (want.size() == 0 || bitwise_equal(x, y)) return {};
    if (!all_finite(want)) return name + " (the oracle's is not finite everywhere: no allowance to judge by)";
    const double error = diff_norm(x, y);
    const double allowed = allowed_for(want, abs_t, variance, x, y);
    if (std::isfinite(error) && error <= allowed) return {};
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s (%.3g apart, the allowance is %.3g)", name.c_str(), error, allowed);
    return buf;
  };
  std::string found = from_dw ? std::string() : apart("dx", a.dx, b.dx, ref.dx, abs.dx, var.dx);
  for (size_t l = 0; found.empty() && l < ref.dw.size(); ++l) {
    const std::string layer = " of layer " + std::to_string(l + 1);
    found = apart("dw" + layer, at(a.dw, l), at(b.dw, l), ref.dw[l], at(abs.dw, l), var.dw[l]);
    if (found.empty()) found = apart("db" + layer, at(a.db, l), at(b.db, l), ref.db[l], at(abs.db, l), var.db[l]);
  }
  return found;
}

}  // namespace

std::string stack_runs_apart(const CheckContext& ctx, const StackRun& a, const StackRun& b) {
  const double tol = order_tolerance(ctx, stack_unit(ctx.c));
  // Each run may be its allowance (scaled by the oracle's norms) away from the oracle, so
  // two may be twice it apart.
  return first_apart(ctx, a, b, stack_unit(ctx.c), false,
                     [&](const Tensor& want, const Tensor& abs_t, const Tensor& variance, const Tensor&,
                         const Tensor&) { return 2.0 * order_allowance(want, abs_t, variance, tol); });
}

std::string stack_weight_grads_apart(const CheckContext& ctx, const StackRun& a, const StackRun& b) {
  const double u_acc = unit_roundoff(accumulation_of(ctx.c));
  const double u_store = unit_roundoff(ctx.c.dtype);
  const double tol = order_tolerance(ctx, u_acc);
  // Twice the accumulation's order allowance, plus each run's one rounding to storage.
  return first_apart(
      ctx, a, b, u_acc, true,
      [&](const Tensor& want, const Tensor& abs_t, const Tensor& variance, const Tensor& x, const Tensor& y) {
        return 2.0 * order_allowance(want, abs_t, variance, tol) + 2.0 * u_store * std::max(norm(x), norm(y));
      });
}

CheckResult stack_shape_run(const CheckContext& ctx) {
  CheckResult r = make_result("shape", Disposition::kPassed);
  const auto& layers = ctx.stack->layers;
  const bool same = padding_kind(ctx.c) == PadKind::kSame || padding_kind(ctx.c) == PadKind::kSameLower;
  for (size_t l = 0; l < layers.size(); ++l) {
    for (size_t i = 0; same && i < layers[l].conv.spatial.dims.size(); ++i) {
      const DimGeometry& d = layers[l].conv.spatial.dims[i];
      if (d.out != (d.in + d.stride - 1) / d.stride) {
        r.disposition = Disposition::kFailed;
        r.message += "layer " + std::to_string(l + 1) + " SAME dim " + std::to_string(i) + " resolves to " +
                     std::to_string(d.out) + ", ceil(in/s) is " + std::to_string((d.in + d.stride - 1) / d.stride) +
                     "; ";
      }
    }
    const StackRun& cand = ctx.stack->cand;
    if (l < cand.activations.size()) {
      expect_layer_shape("layer " + std::to_string(l + 1) + " output", cand.activations[l].shape, layers[l].out_shape(),
                         r);
    }
  }
  if (ctx.stack->cand.status.ok()) {
    expect_layer_shape("y", ctx.stack->cand.y.shape, layers.back().out_shape(), r);
    expect_layer_shape("dx", ctx.stack->cand.dx.shape, layers.front().in_shape(), r);
  }
  std::string extents = "layer extents: " + extent(layers.front().in_shape());
  for (const StackLayer& l : layers) extents += " -> " + extent(l.out_shape());
  const Dims in = layers.front().in_shape(), out = layers.back().out_shape();
  std::string erosion;
  for (size_t i = 2; i < in.size(); ++i) {
    if (out[i] < in[i]) {
      erosion += " dim " + std::to_string(i - 2) + " loses " + std::to_string(in[i] - out[i]) + " positions;";
    }
  }
  extents +=
      erosion.empty() ? " (no erosion)" : " (eroded over " + std::to_string(layers.size()) + " layers:" + erosion + ")";
  r.message = r.message.empty() ? extents : r.message + extents;
  return r;
}

std::string stack_backward_not_applicable(const CheckContext& ctx) {
  if (ctx.is_reference) return "compares a candidate with the oracle (the oracle's gradients are proved op by op)";
  if (ctx.c.dtype == DType::kF16 || ctx.c.dtype == DType::kBF16) {
    return "f16/bf16 gradients are checked op by op (single-op cases in the dtype): through a stack, values that "
           "round to a tie in a max pool, or a relu input within rounding of 0, route the gradient differently in "
           "any two correct runs";
  }
  if (ctx.c.dtype == DType::kF32 && ctx.stack->ref.status.ok()) {
    const std::string why = unforced_routing(*ctx.stack, stack_unit(ctx.c), kSigmas);
    if (!why.empty()) {
      return why +
             ": sums in another order may decide them otherwise, which routes the gradient elsewhere in two "
             "correct f32 runs (checked op by op)";
    }
  }
  return {};
}

CheckResult stack_backward_run(const CheckContext& ctx) {
  const StackRun& cand = ctx.stack->cand;
  const StackRun& ref = ctx.stack->ref;
  if (!cand.status.ok()) return call_failed("backward", "the stack", cand.status);
  if (!ref.status.ok())
    return make_result("backward", Disposition::kFailed, "the oracle failed: " + ref.status.to_string());
  // A stack's dx is judged on all of x, unlike one conv's (distrust_output): the inputs
  // no path through the stack reaches are the influence check's blind spots to report,
  // not zeros to leave out. A dx the oracle makes one value everywhere cannot tell a
  // correct dx from a kernel that writes that value, so a pass is MISTRUSTED; a failure
  // in dw or db stands.
  const std::string why = distrust("dx", ref.dx);
  const double u = stack_unit(ctx.c);
  const double tol = order_tolerance(ctx, u);
  const StackRun& own = ctx.stack->lowered;
  if (!own.status.ok())
    return make_result("backward", Disposition::kFailed, "the oracle in the dtype failed: " + own.status.to_string());
  const AbsGrads abs = absolute_grads(*ctx.stack, ref);
  const GradVariance var = gradient_error_variance(*ctx.stack, u);
  // Layer l's tensor of a per-layer list, or an empty one (a list without db).
  auto at = [](const std::vector<Tensor>& v, size_t l) { return l < v.size() ? v[l] : Tensor{}; };
  // A gradient the oracle makes non-finite anywhere (an f64 overflow) has no norm to judge
  // it by: it is left out and named, and the others are judged (a failure among them
  // stands; a pass is MISTRUSTED, since a wrong one could hide in what was left out).
  std::vector<std::string> unjudged;
  Judged worst;
  std::string worst_name;
  auto consider = [&](const std::string& name, const Tensor& c, const Tensor& want, const Tensor& own_t,
                      const Tensor& abs_t, const Tensor& variance) {
    if (want.size() == 0) return;
    if (!all_finite(want)) {
      unjudged.push_back(name);
      return;
    }
    const Judged j = judge(c, want, own_t, abs_t, variance, tol);
    if (worst_name.empty() || !(j.ratio() <= worst.ratio())) worst = j, worst_name = name;
  };
  consider("dx", cand.dx, ref.dx, own.dx, abs.dx, var.dx);
  for (size_t l = 0; l < ref.dw.size(); ++l) {
    const std::string layer = " of layer " + std::to_string(l + 1);
    consider("dw" + layer, cand.dw[l], ref.dw[l], at(own.dw, l), at(abs.dw, l), var.dw[l]);
    consider("db" + layer, cand.db[l], ref.db[l], at(own.db, l), at(abs.db, l), var.db[l]);
  }
  std::string left_out;
  for (const std::string& name : unjudged) left_out += (left_out.empty() ? "" : ", ") + name;
  if (!left_out.empty()) left_out = "; not judged, the oracle's is not finite everywhere: " + left_out;
  if (worst_name.empty()) {
    return make_result("backward", Disposition::kMistrusted,
                       "no gradient can be judged: the oracle's are not finite everywhere");
  }
  CheckResult r = make_result("backward", Disposition::kPassed);
  r.max_error_ratio = worst.ratio();
  r.max_abs_error = worst.error;
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "worst normwise error %.3g in %s, %.3g of its allowance %.3g (tolerance %.3g of the norm over %zu layers",
      worst.error, worst_name.c_str(), worst.ratio(), worst.allowed, tol, ctx.stack->layers.size());
  r.message = buf;
  if (ctx.c.dtype != DType::kF64) {
    r.message += ", plus " + std::to_string(static_cast<int>(kOwnError)) + " times the error of the oracle in " +
                 std::string(dtype_name(ctx.c.dtype));
  }
  r.message += ", plus " + std::to_string(static_cast<int>(kSigmas)) +
               " standard deviations of the propagated rounding error)" + left_out;
  if (!(worst.ratio() <= 1.0)) r.disposition = Disposition::kFailed;
  if (r.disposition == Disposition::kPassed && !why.empty())
    return make_result("backward", Disposition::kMistrusted, why);
  if (r.disposition == Disposition::kPassed && !unjudged.empty()) r.disposition = Disposition::kMistrusted;
  return r;
}

}  // namespace kc::checks
