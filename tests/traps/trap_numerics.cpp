// The allowance traps (see trap_numerics.h).
#include "trap_numerics.h"

#include <cmath>

#include "judge/tolerance.h"
#include "judge/transform_bound.h"

namespace kc::traps {
namespace {

// y moved by ten times the F(4,3) bound of its plane, signs alternating: a transform whose
// rounding is an order of magnitude worse than the algorithm allows.
Status ten_times_the_bound(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                           bool relu, Tensor& y) {
  const ConvSetup clean{Bug::kNone, s.form};
  KC_RETURN_IF_ERROR(trap_conv_forward(clean, g, x, w, b, relu, y));
  Tensor abs = y, abs_b = b ? absolute(*b) : Tensor{};
  KC_RETURN_IF_ERROR(trap_conv_forward(clean, g, absolute(x), absolute(w), b ? &abs_b : nullptr, false, abs));
  spread_over_planes(abs);
  ToleranceSpec spec{Tolerance{}, y.dtype, g.in_per_group() * g.spatial.kernel_count() + 1};
  const Numerics n = trap_numerics(Bug::kWinogradTenTimes);
  const int rank = static_cast<int>(g.spatial.dims.size());
  spec.transform_growth = transform_growth(n, rank);
  spec.transform_terms = transform_terms(n, rank);
  for (int64_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) continue;
    y[i] = round_to(y.dtype, y[i] + (i % 2 ? -10.0 : 10.0) * element_bound(spec, 0.0, abs[i]));
  }
  return ok_status();
}

}  // namespace

Numerics trap_numerics(Bug bug) {
  Numerics n;
  if (bug == Bug::kWinogradTenTimes) n.algorithm = Algorithm::kWinograd, n.transform_m = 4, n.transform_r = 3;
  if (bug == Bug::kFtzFlushesNormals) n.flushes_subnormals = true;
  if (bug == Bug::kSkipTapsDropsReal) n.skips_padding_taps = true;
  return n;
}

Status trap_numerics_forward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                             const Tensor* b, bool relu, Tensor& y) {
  const ConvSetup clean{Bug::kNone, s.form};
  if (s.bug == Bug::kWinogradTenTimes) return ten_times_the_bound(s, g, x, w, b, relu, y);
  if (s.bug == Bug::kSkipTapsDropsReal) {
    Tensor dropped = x;  // the first element of every row read as padding
    const int64_t row = g.spatial.dims.back().in;
    for (int64_t i = 0; i < dropped.size(); i += row) dropped[i] = 0.0;
    return trap_conv_forward(clean, g, dropped, w, b, relu, y);
  }
  KC_RETURN_IF_ERROR(trap_conv_forward(s, g, x, w, b, relu, y));
  if (s.bug == Bug::kFtzFlushesNormals) {
    for (double& v : y.data) v = std::abs(v) < 0x1p-6 ? 0.0 : v;  // far above the smallest normal
  }
  return ok_status();
}

}  // namespace kc::traps
