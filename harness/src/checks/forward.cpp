// forward: the backend's y (and max-pool indices) against the oracle within the
// tolerance model. Indices must equal the oracle's under tie first/last; under `any`
// each index must point at an element holding the maximum (the argmax check says more).
#include <cmath>

#include "check_list.h"
#include "check_math.h"
#include "common.h"
#include "nonfinite_origin.h"
#include "padding_taps.h"

namespace kc::checks {
namespace {

// Plane offset of output element i: indices are flat positions inside one (n, c) plane.
int64_t plane_base(const PoolGeometry& g, int64_t i) { return (i / g.spatial.out_count()) * g.spatial.in_count(); }

void compare_indices(const CheckContext& ctx, const PoolGeometry& g, CheckResult& r) {
  const IndexTensor& got = *ctx.cand.indices;
  const IndexTensor& want = *ctx.ref.indices;
  int64_t bad = 0;
  std::vector<WorstPoint> worst;
  for (int64_t i = 0; i < want.size(); ++i) {
    const int64_t gi = got.data[static_cast<size_t>(i)], wi = want.data[static_cast<size_t>(i)];
    bool ok = gi == wi;
    if (!ok && g.tie == TieRule::kAny && gi >= 0 && gi < g.spatial.in_count()) {
      const double v = ctx.in.x[plane_base(g, i) + gi], y = ctx.ref.y[i];
      ok = v == y || (std::isnan(v) && std::isnan(y));
    }
    if (ok) continue;
    if (++bad <= 5)
      worst.push_back({"indices", unravel(i, want.shape), static_cast<double>(gi), static_cast<double>(wi), 0.0});
  }
  if (bad == 0) return;
  mark_failed(r);
  r.worst.insert(r.worst.end(), worst.begin(), worst.end());
  r.message += "indices: " + std::to_string(bad) + " of " + std::to_string(want.size()) + " differ (tie " +
               std::string(tie_rule_name(g.tie)) + "); ";
}

}  // namespace

CheckResult forward_run(const CheckContext& ctx) {
  CheckResult r = make_result("forward", Disposition::kPassed);
  if (const ConvGeometry* cg = conv_geo(ctx)) {
    compare_padding_taps(ctx, "y", ctx.cand.y, ctx.ref.y, ctx.abs.y, y_without_padding_taps(ctx, *cg), r);
    if (r.disposition == Disposition::kFailed) r.message += nonfinite_origin(ctx, *cg);
  } else {
    compare_tensors("y", ctx.cand.y, ctx.ref.y, &ctx.abs.y, tolerance_for(ctx, "y"), r);
  }
  if (const PoolGeometry* g = pool_geo(ctx); g && ctx.ref.indices) {
    if (!ctx.cand.indices) {
      mark_failed(r);
      r.message += "training mode but the backend returned no indices; ";
    } else {
      compare_indices(ctx, *g, r);
    }
  }
  if (r.disposition == Disposition::kPassed) {
    if (std::string why = distrust("y", ctx.ref.y); !why.empty()) {
      return make_result("forward", Disposition::kMistrusted, why);
    }
  }
  return r;
}

}  // namespace kc::checks
