// The boundary values of each dtype and the element draw of `fill: boundary` (see
// boundary_values.h). Derived from the dtype's significand bits and exponent range, so
// a dtype added to kc/dtype.h gets its boundaries without a table to extend.
#include "core/boundary_values.h"

#include <cmath>
#include <limits>

#include "core/fill.h"

namespace kc {
namespace {

// Significand bits after the point: 10 (f16), 7 (bf16), 23 (f32), 52 (f64).
int fraction_bits(DType dtype) { return -static_cast<int>(std::lround(std::log2(unit_roundoff(dtype)))) - 1; }

}  // namespace

std::vector<BoundaryValue> finite_boundary_values(DType dtype) {
  const int p = fraction_bits(dtype);
  const double max = largest_finite(dtype);
  const int emax = std::ilogb(max);
  // max + half its ulp is the round-to-max threshold (a tie whose even neighbour is the
  // next power of two: inf); a sum max + h rounds to inf, max + h_below to max.
  const double half_ulp = std::ldexp(1.0, emax - p - 1);
  const double h_below = half_ulp - std::ldexp(half_ulp, -p - 1);
  const int emin = min_normal_exponent(dtype);
  const double normal = std::ldexp(1.0, emin), tiny = std::ldexp(1.0, emin - p);
  return {
      {"largest finite", max},
      {"largest finite, negated", -max},
      {"half an ulp of the largest finite (a sum with it becomes inf)", half_ulp},
      {"just below half an ulp of the largest finite (a sum with it rounds to max)", h_below},
      {"smallest normal", normal},
      {"smallest normal, negated", -normal},
      {"largest subnormal", normal - tiny},
      {"smallest subnormal", tiny},
      {"smallest subnormal, negated", -tiny},
      {"+0", 0.0},
      {"-0", -0.0},
      {"2^p + 1 (times 1.5 or plus 0.5: a tie between neighbours)", std::ldexp(1.0, p) + 1.0},
      {"0.5", 0.5},
      {"1.5", 1.5},
      {"1", 1.0},
      {"-1", -1.0},
  };
}

double boundary_element(uint64_t seed, uint64_t stream, uint64_t index, DType dtype) {
  // Its own streams, apart from those of the value and the mask of the other fills.
  const double u = uniform01(seed, stream + 32, index), pick = uniform01(seed, stream + 48, index);
  const double inf = std::numeric_limits<double>::infinity();
  if (u < 0.005) return inf;
  if (u < 0.010) return -inf;
  if (u < 0.015) return std::numeric_limits<double>::quiet_NaN();
  if (u < 0.465) {
    static thread_local DType cached_for = DType::kF64;
    static thread_local std::vector<BoundaryValue> values = finite_boundary_values(DType::kF64);
    if (cached_for != dtype) values = finite_boundary_values(dtype), cached_for = dtype;
    return values[static_cast<size_t>(pick * static_cast<double>(values.size()))].value;
  }
  return 2.0 * pick - 1.0;
}

}  // namespace kc
