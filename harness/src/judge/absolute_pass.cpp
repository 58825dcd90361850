// absolute_pass(): the oracle on absolute values; absolute_pass_for() spreads it over
// output planes for a backend that declares a transform algorithm; finite_part_pass()
// the same over the finite inputs alone.
#include "judge/absolute_pass.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "judge/tolerance.h"
#include "judge/transform_bound.h"
#include "ops/op_module.h"

namespace kc {

OpOutputs absolute_pass(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref) {
  return std::visit([&](const auto& og) { return absolute_pass_of(c, og, in, ref); }, g);
}

OpOutputs absolute_pass_for(const Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in,
                            const OpOutputs& ref) {
  return absolute_pass_for(backend, g, absolute_pass(c, g, in, ref));
}

OpOutputs absolute_pass_for(const Backend& backend, const OpGeometry& g, OpOutputs abs) {
  if (backend.name() == "reference" || !std::holds_alternative<ConvGeometry>(g) || !backend.numerics().transform()) {
    return abs;
  }
  for (Tensor* t : {&abs.y, &abs.dx, &abs.dw}) spread_over_planes(*t);
  return abs;
}

namespace {

bool all_finite(const OpInputs& in) {
  auto finite = [](const Tensor& t) {
    return std::all_of(t.data.begin(), t.data.end(), [](double v) { return std::isfinite(v); });
  };
  return finite(in.x) && finite(in.w) && finite(in.b) && finite(in.dy);
}

}  // namespace

std::optional<OpOutputs> nonfinite_reach_pass(const Case& c, const OpGeometry& g, const OpInputs& in,
                                              const OpOutputs& ref) {
  if (all_finite(in)) return std::nullopt;
  OpInputs marks = in;
  for (Tensor* t : {&marks.x, &marks.w, &marks.b, &marks.dy}) {
    for (double& v : t->data) v = std::isfinite(v) ? 1.0 : kNonfiniteMark;
  }
  return absolute_pass(c, g, marks, ref);
}

std::optional<OpOutputs> finite_part_pass(const Case& c, const OpGeometry& g, const OpInputs& in,
                                          const OpOutputs& ref) {
  if (all_finite(in)) return std::nullopt;
  OpInputs part = in;
  for (Tensor* t : {&part.x, &part.w, &part.b, &part.dy}) {
    for (double& v : t->data) v = std::isfinite(v) ? v : 0.0;
  }
  // A max pool's y is a selection, not a sum (its magnitudes come from ref.y): only its
  // dx sums, through the oracle's indices.
  return absolute_pass(c, g, part, ref);
}

NonfinitePasses nonfinite_passes(const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref) {
  return {finite_part_pass(c, g, in, ref), nonfinite_reach_pass(c, g, in, ref)};
}

}  // namespace kc
