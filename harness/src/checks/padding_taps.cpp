// Expected results without zero-padding taps (see padding_taps.h).
#include "checks/padding_taps.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "judge/tolerance.h"

namespace kc::checks {
namespace {

bool any_non_finite(const Tensor& t) {
  return std::any_of(t.data.begin(), t.data.end(), [](double v) { return !std::isfinite(v); });
}

bool has_zero_padding(const ConvGeometry& g) {
  if (g.mode != PaddingMode::kZeros) return false;
  return std::any_of(g.spatial.dims.begin(), g.spatial.dims.end(),
                     [](const DimGeometry& d) { return d.pad_lo > 0 || d.pad_hi > 0; });
}

// Calls f(x_offset, w_offset, y_offset) for every tap of every output that lies inside
// the input, over the three (padded-to-3-D) spatial dims of one (n, co, ci) triple.
template <typename F>
void inside_taps(const ConvGeometry& g, F&& f) {
  const std::array<DimGeometry, 3> d = g.spatial.as_3d();
  for (int64_t o0 = 0; o0 < d[0].out; ++o0)
    for (int64_t o1 = 0; o1 < d[1].out; ++o1)
      for (int64_t o2 = 0; o2 < d[2].out; ++o2)
        for (int64_t k0 = 0; k0 < d[0].kernel; ++k0)
          for (int64_t k1 = 0; k1 < d[1].kernel; ++k1)
            for (int64_t k2 = 0; k2 < d[2].kernel; ++k2) {
              const int64_t i0 = o0 * d[0].stride + k0 * d[0].dilation - d[0].pad_lo;
              const int64_t i1 = o1 * d[1].stride + k1 * d[1].dilation - d[1].pad_lo;
              const int64_t i2 = o2 * d[2].stride + k2 * d[2].dilation - d[2].pad_lo;
              if (i0 < 0 || i0 >= d[0].in || i1 < 0 || i1 >= d[1].in || i2 < 0 || i2 >= d[2].in) continue;
              f((i0 * d[1].in + i1) * d[2].in + i2, (k0 * d[1].kernel + k1) * d[2].kernel + k2,
                (o0 * d[1].out + o1) * d[2].out + o2);
            }
}

}  // namespace

namespace {

Tensor y_inside(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b, bool relu) {
  Tensor y = Tensor::zeros(DType::kF64, g.y_shape());
  const int64_t plane = g.spatial.in_count(), out = g.spatial.out_count(), taps = g.spatial.kernel_count();
  const int64_t cin = g.in_per_group(), cout = g.out_per_group();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co) {
      double* yp = &y.data[static_cast<size_t>((n * g.out_channels + co) * out)];
      for (int64_t o = 0; o < out; ++o) yp[o] = g.bias ? b[co] : 0.0;
      for (int64_t ci = 0; ci < cin; ++ci) {
        const double* xp = &x.data[static_cast<size_t>((n * g.in_channels + co / cout * cin + ci) * plane)];
        const double* wp = &w.data[static_cast<size_t>((co * cin + ci) * taps)];
        inside_taps(g, [&](int64_t xi, int64_t wi, int64_t yi) { yp[yi] += wp[wi] * xp[xi]; });
      }
    }
  if (relu) {
    for (double& v : y.data) v = v > 0.0 || std::isnan(v) ? v : 0.0;  // relu(NaN) = NaN
  }
  return y;
}

Tensor dw_inside(const ConvGeometry& g, const Tensor& x, const Tensor& dz) {
  Tensor dw = Tensor::zeros(DType::kF64, g.w_shape());
  const int64_t plane = g.spatial.in_count(), out = g.spatial.out_count(), taps = g.spatial.kernel_count();
  const int64_t cin = g.in_per_group(), cout = g.out_per_group();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co)
      for (int64_t ci = 0; ci < cin; ++ci) {
        const double* xp = &x.data[static_cast<size_t>((n * g.in_channels + co / cout * cin + ci) * plane)];
        const double* dp = &dz.data[static_cast<size_t>((n * g.out_channels + co) * out)];
        double* wp = &dw.data[static_cast<size_t>((co * cin + ci) * taps)];
        inside_taps(g, [&](int64_t xi, int64_t wi, int64_t yi) { wp[wi] += dp[yi] * xp[xi]; });
      }
  return dw;
}

}  // namespace

std::optional<SkippedTaps> y_without_padding_taps(const CheckContext& ctx, const ConvGeometry& g) {
  if (!has_zero_padding(g) || !any_non_finite(ctx.in.w)) return std::nullopt;
  return SkippedTaps{y_inside(g, ctx.in.x, ctx.in.w, ctx.in.b, op_traits(ctx.c).relu),
                     y_inside(g, absolute(ctx.in.x), absolute(ctx.in.w), absolute(ctx.in.b), false)};
}

std::optional<SkippedTaps> dw_without_padding_taps(const CheckContext& ctx, const ConvGeometry& g, const Tensor& dz) {
  if (!has_zero_padding(g) || !any_non_finite(dz)) return std::nullopt;
  return SkippedTaps{dw_inside(g, ctx.in.x, dz), dw_inside(g, absolute(ctx.in.x), absolute(dz))};
}

bool declares_padding_skip(const CheckContext& ctx) {
  return !ctx.is_reference && ctx.backend.numerics().skips_padding_taps;
}

void compare_padding_taps(const CheckContext& ctx, const char* tensor, const Tensor& cand, const Tensor& strict,
                          const Tensor& abs, const std::optional<SkippedTaps>& skipped, CheckResult& r) {
  const ToleranceSpec spec = tolerance_for(ctx, tensor);
  CheckResult contract = r;
  compare_tensors(tensor, cand, strict, &abs, spec, contract);
  if (contract.disposition != Disposition::kFailed || !skipped) {
    r = contract;
    return;
  }
  CheckResult without = r;
  compare_tensors(tensor, cand, skipped->value, &skipped->abs, spec, without);
  if (without.disposition == Disposition::kFailed) {
    r = contract;
    return;
  }
  const std::string what = std::string(tensor) + ": NaN*0 at a zero-padding tap not formed (a non-finite " +
                           (std::string(tensor) == "y" ? "weight" : "cotangent") + " meets the padding)";
  if (declares_padding_skip(ctx)) {
    r = without;
    r.message += what + ", as the backend declares (padding taps skipped); ";
    return;
  }
  r = contract;
  r.message += what + ": the backend skips padding taps without declaring it; ";
}

}  // namespace kc::checks
