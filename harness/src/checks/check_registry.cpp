// The check registry (each row of the check table bound to its code) and the
// per-tensor tolerance shared by the checks.
#include <algorithm>
#include <cmath>

#include "check_list.h"
#include "common.h"
#include "core/invariant.h"
#include "judge/transform_bound.h"
#include "kc/shape.h"
#include "ops/op_module.h"
#include "padding_coverage.h"

namespace kc {

namespace {

// A check's code: its two functions, named after it.
struct Binding {
  std::string_view name;
  std::string (*not_applicable)(const CheckContext&);
  CheckResult (*run)(const CheckContext&);
};

#define KC_BIND(NAME) \
  Binding { #NAME, &checks::NAME##_not_applicable, &checks::NAME##_run }
#define KC_BIND_RUN(NAME) \
  Binding { #NAME, nullptr, &checks::NAME##_run }
const Binding kBindings[] = {
    KC_BIND_RUN(shape),       KC_BIND_RUN(forward),   KC_BIND(backward),   KC_BIND(gradcheck),
    KC_BIND(adjoint),         KC_BIND(weight_share),  KC_BIND_RUN(argmax), KC_BIND(padding),
    KC_BIND_RUN(determinism), KC_BIND_RUN(integrity), KC_BIND_RUN(golden), KC_BIND_RUN(state),
    KC_BIND_RUN(checkpoint),  KC_BIND_RUN(influence), KC_BIND_RUN(drift),
};
#undef KC_BIND
#undef KC_BIND_RUN

}  // namespace

const std::vector<CheckDef>& check_registry() {
  static const std::vector<CheckDef> registry = [] {
    std::vector<CheckDef> r;
    for (const CheckInfo& info : check_table()) {
      const Binding* b = std::find_if(std::begin(kBindings), std::end(kBindings),
                                      [&](const Binding& x) { return x.name == info.name; });
      KC_INVARIANT(b != std::end(kBindings));  // every row of the table has its code
      r.push_back(CheckDef{info, b->not_applicable, b->run});
    }
    KC_INVARIANT(r.size() == std::size(kBindings));  // and all code has a row
    return r;
  }();
  return registry;
}

namespace {

// A candidate that declares a transform algorithm is judged by its bound (transform_bound.h)
// and never held to exact equality (docs/checks.md, "What a backend declares").
void with_transform(const CheckContext& ctx, const ConvGeometry& g, ToleranceSpec& s) {
  const Numerics n = ctx.backend.numerics();
  if (!n.transform()) return;
  const int rank = static_cast<int>(g.spatial.dims.size());
  s.transform_growth = transform_growth(n, rank);
  s.transform_terms = transform_terms(n, rank);
  const bool exact = s.tolerance.kind == ToleranceKind::kExact ||
                     (s.tolerance.kind == ToleranceKind::kExplicit && s.tolerance.rtol == 0 && s.tolerance.atol == 0);
  if (!exact) return;
  s.tolerance = Tolerance{};
  s.note = "judged by " + algorithm_name(n) +
           "'s error bound, not exactly: its transforms round even data whose direct sums are exact";
}

// What a declared flush of subnormals may move a result by: its own flush (one smallest
// normal number) and each of its n terms' (an input below it, flushed on conversion,
// times the largest input magnitude).
double flush_allowance(const CheckContext& ctx, const ToleranceSpec& s) {
  double most = 0.0;
  for (const Tensor* t : {&ctx.in.x, &ctx.in.w, &ctx.in.b, &ctx.in.dy}) {
    for (int64_t i = 0; i < t->size(); ++i) {
      if (std::isfinite((*t)[i])) most = std::max(most, std::abs((*t)[i]));
    }
  }
  return std::ldexp(1.0, min_normal_exponent(s.storage)) * (1.0 + static_cast<double>(s.n) * most);
}

// Where the tensor is a sum whose terms can pass the accumulator's range: the finite
// part of each element's terms, and an average's divisor (a kernel may divide last).
// A max pool's y is a selection: its magnitudes never accumulate.
// The sum tensor of that name in o, or null (none, another name, or empty).
const Tensor* sum_named(const OpOutputs* o, std::string_view tensor) {
  const bool sum = tensor == "y" || tensor == "dx" || tensor == "dw" || tensor == "db";
  if (o == nullptr || !sum) return nullptr;
  const Tensor& t = checks::output_named(*o, tensor);
  return t.size() > 0 ? &t : nullptr;
}

void with_finite_terms(const CheckContext& ctx, std::string_view tensor, ToleranceSpec& s) {
  const bool selection = op_traits(ctx.c).indices && tensor == "y";
  if (selection || ctx.finite_abs == nullptr) return;
  s.finite_terms = sum_named(ctx.finite_abs, tensor);
  s.inputs_finite = ctx.inputs_finite;
  s.nonfinite_reach = sum_named(ctx.nonfinite_reach, tensor);
}

}  // namespace

ToleranceSpec tolerance_for(const CheckContext& ctx, std::string_view tensor) {
  // The case's accumulation describes a candidate's sums; the oracle's own checks keep
  // the contract's default (the oracle sums in f64).
  ToleranceSpec s{ctx.c.tolerance, ctx.c.dtype, 1, ctx.is_reference ? std::nullopt : ctx.c.accumulation};
  std::visit([&](const auto& g) { checks::tolerance_terms(g, tensor, s); }, ctx.geo);
  if (const auto* g = std::get_if<ConvGeometry>(&ctx.geo); g && !ctx.is_reference) {
    with_transform(ctx, *g, s);
    // db sums dy directly, whatever algorithm the convolution runs; after a relu its mask
    // comes from the transform's rounded pre-activations, so it is not held exact either.
    if (tensor == "db") s.transform_growth = 0.0, s.transform_terms = 0;
  }
  if (!ctx.is_reference && ctx.backend.numerics().flushes_subnormals) s.flush_atol = flush_allowance(ctx, s);
  s.relu_output = tensor == "y" && op_traits(ctx.c).relu;
  with_finite_terms(ctx, tensor, s);
  return s;
}

CheckResult make_result(std::string_view name, Disposition d, std::string message) {
  CheckResult r;
  r.name = std::string(name);
  r.disposition = d;
  r.message = std::move(message);
  return r;
}

}  // namespace kc
