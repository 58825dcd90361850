// Diagnoses of wrong non-finite forward values (see nonfinite_origin.h).
#include "nonfinite_origin.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/format.h"
#include "judge/tolerance.h"
#include "kc/dtype.h"
#include "kc/ref/conv.h"
#include "ops/op_module.h"
#include "window.h"

namespace kc::checks {
namespace {

using rules::window_taps;

// Whether some input of output i's window (all channels of its group) or some weight of
// its filter satisfies `pred`.
// A bias, where the conv has one, counts as part of the filter.
template <typename Pred>
bool window_any(const ConvGeometry& g, const OpInputs& in, int64_t i, Pred pred) {
  const Tensor &x = in.x, &w = in.w;
  const int64_t out_count = g.spatial.out_count(), in_count = g.spatial.in_count();
  const int64_t n = i / (g.out_channels * out_count), co = (i / out_count) % g.out_channels;
  if (g.bias && co < in.b.size() && pred(in.b[co])) return true;
  const int64_t cin = g.in_per_group(), group = co / g.out_per_group();
  const int64_t k = g.spatial.kernel_count();
  for (int64_t t = 0; t < cin * k; ++t) {
    if (pred(w[co * cin * k + t])) return true;
  }
  const std::vector<int64_t> taps = window_taps(g.spatial, unravel(i % out_count, g.spatial.out_dims()));
  for (int64_t c = 0; c < cin; ++c) {
    const int64_t plane = (n * g.in_channels + group * cin + c) * in_count;
    for (int64_t t : taps) {
      if (pred(x[plane + t])) return true;
    }
  }
  return false;
}

bool window_finite(const ConvGeometry& g, const OpInputs& in, int64_t i) {
  return !window_any(g, in, i, [](double v) { return !std::isfinite(v); });
}

// Where the oracle's y is ±inf and the kernel's NaN, a direct sum formed 0 x inf where the
// oracle multiplied a nonzero: with a subnormal in the window or filter, one read as 0
// (DAZ) is the evidence; without it no cause is named. Returns how many outputs show it.
int64_t inf_to_nan_dazed(const ConvGeometry& g, const OpInputs& in, const Tensor& cand, const Tensor& ref,
                         const std::vector<char>& may_overflow, int64_t& first) {
  const double normal = std::ldexp(1.0, min_normal_exponent(in.x.dtype));
  const auto subnormal = [normal](double v) { return v != 0.0 && std::abs(v) < normal; };
  int64_t dazed = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    if (may_overflow[static_cast<size_t>(i)]) continue;
    if (!std::isinf(ref[i]) || !std::isnan(cand[i]) || !window_any(g, in, i, subnormal)) continue;
    if (dazed++ == 0) first = i;
  }
  return dazed;
}

// Per output, whether its finite terms may overflow the candidate's accumulator.
std::vector<char> overflow_allowed(const CheckContext& ctx) {
  const ToleranceSpec spec = tolerance_for(ctx, "y");
  std::vector<char> out(static_cast<size_t>(ctx.ref.y.size()), 0);
  for (int64_t i = 0; i < ctx.ref.y.size(); ++i) {
    const double abs_sum = i < ctx.abs.y.size() ? ctx.abs.y[i] : 0.0;
    out[static_cast<size_t>(i)] = accumulator_may_overflow(spec, i, abs_sum);
  }
  return out;
}

// Outputs of the fused op where the oracle's pre-activation is -inf (relu gives 0) and
// the kernel's y is NaN: relu as z * slope with a slope of 0 forms 0 x -inf.
int64_t relu_of_minus_inf_nan(const CheckContext& ctx, const ConvGeometry& g, const std::vector<char>& may_overflow) {
  const Tensor &cand = ctx.cand.y, &ref = ctx.ref.y;
  bool any = false;
  for (int64_t i = 0; i < ref.size() && !any; ++i) any = ref[i] == 0.0 && std::isnan(cand[i]);
  if (!any) return 0;
  const Tensor z = ref::conv_forward(g, ctx.in.x, ctx.in.w, g.bias ? &ctx.in.b : nullptr);
  int64_t n = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    n += !may_overflow[static_cast<size_t>(i)] && std::isnan(cand[i]) && z[i] == -INFINITY;
  }
  return n;
}

bool any_nonfinite(const OpInputs& in) {
  for (const Tensor* t : {&in.x, &in.w, &in.b}) {
    for (double v : t->data) {
      if (!std::isfinite(v)) return true;
    }
  }
  return false;
}

// Non-finite outputs whose window and filter hold only finite values and whose terms
// are small: spread by a transform's tile; read from outside the window where some input
// elsewhere is not finite; else no input could have supplied it: the facts alone.
std::string finite_window_message(const CheckContext& ctx, int64_t count, int64_t first, bool transform) {
  const Tensor& cand = ctx.cand.y;
  const std::string outputs = std::to_string(count) + " outputs";
  const std::string first_y = "the first y at " + at(first, ctx.ref.y.shape) + " = " + num(cand[first]);
  if (transform) {
    return "y: non-finite value spread over the transform's tile to " + outputs +
           " whose window and filter hold only finite values, " + first_y + "; ";
  }
  if (any_nonfinite(ctx.in)) {
    return "y: non-finite value from outside the output's window (an out-of-window read?) at " + outputs + ", " +
           first_y + " where its window and filter hold only finite values; ";
  }
  return "y: non-finite value at " + outputs + " although every input is finite, " + first_y +
         " (its terms' magnitudes sum to " + num(ctx.abs.y[first]) + "): cause unclassified; ";
}

// Counts of wrong non-finite outputs whose windows are finite, by what explains them.
struct OriginCounts {
  int64_t relu_zero = 0, outside = 0, first_outside = -1, overflow = 0, first_overflow = -1;
  int64_t overflow_below = 0, first_below = -1;
};

OriginCounts classify(const CheckContext& ctx, const ConvGeometry& g, bool relu, bool transform,
                      const std::vector<char>& may_overflow) {
  const Tensor &cand = ctx.cand.y, &ref = ctx.ref.y;
  const DType dtype = ctx.c.dtype;
  const double top = largest_finite(dtype);
  const double poison = poison_value();
  OriginCounts f;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double c = cand[i], r = ref[i];
    if (may_overflow[static_cast<size_t>(i)]) continue;
    f.relu_zero += relu && std::isnan(r) && c == 0.0;
    if (std::isfinite(c) || !std::isfinite(r) || !window_finite(g, ctx.in, i)) continue;
    if (std::memcmp(&c, &poison, sizeof c) == 0) continue;  // never written: integrity says so
    if (c == round_to(dtype, r)) continue;                  // a sum past the threshold: inf is right
    // Evidence of a conversion, not of a read: the oracle's y lies at or past the largest
    // finite value but rounds to it, and the kernel's is the infinity of its sign.
    if (std::isinf(c) && std::abs(r) >= top && std::isfinite(round_to(dtype, r)) &&
        std::signbit(c) == std::signbit(r)) {
      if (f.overflow++ == 0) f.first_overflow = i;
      continue;
    }
    // Terms past half the dtype's largest value: a narrower or scaled accumulator
    // overflows there, which no read needs to explain.
    if (!transform && ctx.abs.y[i] > top / 2.0) {
      if (f.overflow_below++ == 0) f.first_below = i;
      continue;
    }
    if (f.outside++ == 0) f.first_outside = i;
  }
  return f;
}

}  // namespace

std::string nonfinite_origin(const CheckContext& ctx, const ConvGeometry& g) {
  const Tensor &cand = ctx.cand.y, &ref = ctx.ref.y;
  if (cand.shape != ref.shape || ref.shape != g.y_shape()) return {};
  const bool relu = op_traits(ctx.c).relu;
  const bool transform = !ctx.is_reference && ctx.backend.numerics().transform();
  const std::vector<char> may_overflow = overflow_allowed(ctx);
  const OriginCounts f = classify(ctx, g, relu, transform, may_overflow);
  const std::string dtype(dtype_name(ctx.c.dtype));
  std::string s;
  if (f.overflow > 0) {
    s += "y: " + num(cand[f.first_overflow]) + " at " + std::to_string(f.overflow) +
         " outputs where the oracle's sum " + num(ref[f.first_overflow]) + " rounds to the largest finite " + dtype +
         " value, the first at " + at(f.first_overflow, ref.shape) +
         ": a sum below the overflow threshold (the largest value plus half an ulp) rounds to the largest value "
         "(a conversion that tests the range before it rounds?); ";
  }
  if (f.relu_zero > 0) {
    s += "y: relu(NaN) = 0 at " + std::to_string(f.relu_zero) +
         " outputs whose pre-activation is NaN (the contract keeps NaN through relu); ";
  }
  if (const int64_t n = relu ? relu_of_minus_inf_nan(ctx, g, may_overflow) : 0; n > 0) {
    s += "y: relu(-inf) = NaN at " + std::to_string(n) +
         " outputs whose pre-activation is -inf (the contract gives 0: relu written as z times a slope of 0 "
         "forms 0 x -inf?); ";
  }
  int64_t first_daz = -1;
  if (const int64_t dazed = transform ? 0 : inf_to_nan_dazed(g, ctx.in, cand, ref, may_overflow, first_daz);
      dazed > 0) {
    s += "y: NaN at " + std::to_string(dazed) + " outputs where the oracle gives ±inf and the window or filter " +
         "holds a subnormal, the first y at " + at(first_daz, ref.shape) +
         ": a subnormal read as 0 met an infinity (0 x inf: subnormal inputs flushed, DAZ); ";
  }
  if (f.outside > 0) s += finite_window_message(ctx, f.outside, f.first_outside, transform);
  if (f.overflow_below > 0) {
    s += "y: non-finite value at " + std::to_string(f.overflow_below) +
         " outputs whose window and filter hold only finite values, the first y at " + at(f.first_below, ref.shape) +
         " = " + num(cand[f.first_below]) + ", whose terms' magnitudes sum to " + num(ctx.abs.y[f.first_below]) +
         " (within the declared accumulator's range): a sum that overflowed early (a narrower or scaled "
         "accumulator?); ";
  }
  return s;
}

}  // namespace kc::checks
