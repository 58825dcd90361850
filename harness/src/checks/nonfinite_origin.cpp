// Diagnoses of wrong non-finite forward values (see nonfinite_origin.h).
#include "nonfinite_origin.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/format.h"
#include "kc/dtype.h"
#include "window.h"

namespace kc::checks {
namespace {

using rules::window_taps;

// Whether every input of output i's window (all channels of its group) and every weight
// of its filter is finite.
bool window_finite(const ConvGeometry& g, const Tensor& x, const Tensor& w, int64_t i) {
  const int64_t out_count = g.spatial.out_count(), in_count = g.spatial.in_count();
  const int64_t n = i / (g.out_channels * out_count), co = (i / out_count) % g.out_channels;
  const int64_t cin = g.in_per_group(), group = co / g.out_per_group();
  const int64_t k = g.spatial.kernel_count();
  for (int64_t t = 0; t < cin * k; ++t) {
    if (!std::isfinite(w[co * cin * k + t])) return false;
  }
  const std::vector<int64_t> taps = window_taps(g.spatial, unravel(i % out_count, g.spatial.out_dims()));
  for (int64_t c = 0; c < cin; ++c) {
    const int64_t plane = (n * g.in_channels + group * cin + c) * in_count;
    for (int64_t t : taps) {
      if (!std::isfinite(x[plane + t])) return false;
    }
  }
  return true;
}

}  // namespace

std::string nonfinite_origin(const ConvGeometry& g, bool relu, bool transform, const Tensor& x, const Tensor& w,
                             const Tensor& cand, const Tensor& ref) {
  if (cand.shape != ref.shape || ref.shape != g.y_shape()) return {};
  int64_t relu_zero = 0, outside = 0, first_outside = -1, overflow = 0, first_overflow = -1;
  const DType dtype = x.dtype;  // the case's storage dtype (inputs are made in it)
  const double top = largest_finite(dtype);
  const double poison = poison_value();
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double c = cand[i], r = ref[i];
    relu_zero += relu && std::isnan(r) && c == 0.0;
    if (std::isfinite(c) || !std::isfinite(r) || !window_finite(g, x, w, i)) continue;
    if (std::memcmp(&c, &poison, sizeof c) == 0) continue;  // never written: integrity says so
    if (c == round_to(dtype, r)) continue;                  // a sum past the threshold: inf is right
    // Evidence of a conversion, not of a read: the oracle's y lies at or past the largest
    // finite value but rounds to it, and the kernel's is the infinity of its sign.
    if (std::isinf(c) && std::abs(r) >= top && std::isfinite(round_to(dtype, r)) &&
        std::signbit(c) == std::signbit(r)) {
      if (overflow++ == 0) first_overflow = i;
      continue;
    }
    if (outside++ == 0) first_outside = i;
  }
  std::string s;
  if (overflow > 0) {
    s += "y: " + num(cand[first_overflow]) + " at " + std::to_string(overflow) + " outputs where the oracle's sum " +
         num(ref[first_overflow]) + " rounds to the largest finite " + std::string(dtype_name(dtype)) +
         " value, the first at " + at(first_overflow, ref.shape) +
         ": a sum below the overflow threshold (the largest value plus half an ulp) rounds to the largest value "
         "(a conversion that tests the range before it rounds?); ";
  }
  if (relu_zero > 0) {
    s += "y: relu(NaN) = 0 at " + std::to_string(relu_zero) +
         " outputs whose pre-activation is NaN (the contract keeps NaN through relu); ";
  }
  if (outside > 0 && transform) {
    s += "y: non-finite value spread over the transform's tile to " + std::to_string(outside) +
         " outputs whose window and filter hold only finite values, the first y at " + at(first_outside, ref.shape) +
         " = " + num(cand[first_outside]) + "; ";
  } else if (outside > 0) {
    s += "y: non-finite value from outside the output's window (an out-of-window read?) at " + std::to_string(outside) +
         " outputs, the first y at " + at(first_outside, ref.shape) + " = " + num(cand[first_outside]) +
         " where its window and filter hold only finite values; ";
  }
  return s;
}

}  // namespace kc::checks
