// The notes of failure_notes.h.
#include "judge/failure_notes.h"

#include <cmath>
#include <cstdio>

#include "core/format.h"

namespace kc::notes {

// A backend stores its outputs in the case dtype (backend.h). Where a failing tensor
// holds finite values that dtype cannot hold (76800 in f16, an f64 sum in an f32 case),
// says so: the likely cause is an output never rounded to the dtype, not the arithmetic.
std::string not_stored_in(const ToleranceSpec& spec, const std::string& tensor, const Tensor& cand) {
  if (spec.cand_unrounded || spec.storage == DType::kF64) return {};
  int64_t count = 0, first = -1;
  for (int64_t i = 0; i < cand.size(); ++i) {
    const double v = cand[i];
    if (std::isfinite(v) && round_to(spec.storage, v) != v) {
      if (count++ == 0) first = i;
    }
  }
  if (count == 0) return {};
  std::string where;
  for (int64_t k : unravel(first, cand.shape)) {
    if (!where.empty()) where += ',';
    where += std::to_string(k);
  }
  char value[32];
  std::snprintf(value, sizeof value, "%.17g", cand[first]);  // every digit: 0.1 is no f32 value
  const std::string dt(dtype_name(spec.storage));
  return " (" + std::to_string(count) + (count == 1 ? " value" : " values") + " not representable in " + dt +
         (count == 1 ? ": " : ", the first ") + tensor + "[" + where + "] = " + value +
         "; a backend rounds its outputs to the case dtype)";
}

// Where failing elements are 0 (of either sign) while the oracle's value lies below the
// dtype's smallest normal number: the backend flushed subnormals without declaring it.
std::string flushed(const ToleranceSpec& spec, int64_t failures, const std::vector<std::pair<double, double>>& bad) {
  const double normal = std::ldexp(1.0, min_normal_exponent(spec.storage));
  int64_t n = 0;
  for (const auto& [c, r] : bad) n += c == 0.0 && r != 0.0 && std::abs(r) < normal;
  if (n == 0) return {};
  return " (" + std::string(n == failures ? "all " : "") + std::to_string(n) + (n == 1 ? " is a" : " are") +
         " subnormal flushed to zero: the backend does not declare FTZ" +
         (spec.flush_atol > 0 ? ", or flushes beyond its allowance" : "") + ")";
}

// An error within the same bound taken with the 16-bit storage dtype's unit roundoff as
// the accumulator's: partial sums rounded to bf16 (or f16) in some order, where the
// contract's f32 accumulator allows far less. Only for the bound model: an explicit or
// exact tolerance models no accumulator.
bool within_narrow_sum(const ToleranceSpec& s, double err, double ref, double abs_sum, double slack) {
  if (s.tolerance.kind != ToleranceKind::kBound || (s.storage != DType::kF16 && s.storage != DType::kBF16))
    return false;
  if (unit_roundoff(accumulation_of(s)) >= unit_roundoff(s.storage)) return false;
  // Past a quarter of the terms' magnitudes the worst case of n narrow roundings explains
  // any error (a lost term, zeros): no cause is named then.
  if (!(kBoundSafety * gamma_n(s.n, unit_roundoff(s.storage)) < 0.25)) return false;
  ToleranceSpec narrow = s;
  narrow.accumulation = s.storage;
  return err <= element_bound(narrow, ref, abs_sum) + slack;
}

std::string summed_narrow(const ToleranceSpec& spec, int64_t failures, int64_t narrow) {
  if (narrow == 0 || narrow != failures) return {};
  const std::string dt(dtype_name(spec.storage));
  return " (all within what sums rounded to " + dt + " can lose: summed in " + dt + ", not accumulated in " +
         std::string(dtype_name(accumulation_of(spec))) + ")";
}

// The facts of failing non-finite elements, and a cause only where the values alone show
// it: ±inf that became NaN (inf - inf in a sum, or 0 x inf where a subnormal was read as
// 0: the values cannot tell, so no cause is named here; the forward check names it from
// the inputs), NaN that became 0, NaN stored as an infinity (a 16-bit conversion that
// truncates the mantissa of a NaN whose high bits are 0), and ±inf stored as the dtype's
// largest finite value (a saturating store) or as another finite value (no cause).
std::string nonfinite_changes(const ToleranceSpec& spec, const std::vector<std::pair<double, double>>& bad) {
  int64_t inf_nan = 0, nan_zero = 0, nan_inf = 0, saturated = 0, inf_finite = 0;
  const double top = largest_finite(spec.storage);
  for (const auto& [c, r] : bad) {
    inf_nan += std::isinf(r) && std::isnan(c);
    nan_zero += std::isnan(r) && c == 0.0;
    nan_inf += std::isnan(r) && std::isinf(c);
    const bool finite_for_inf = std::isinf(r) && std::isfinite(c);
    saturated += finite_for_inf && std::abs(c) == top && std::signbit(c) == std::signbit(r);
    inf_finite += finite_for_inf && !(std::abs(c) == top && std::signbit(c) == std::signbit(r));
  }
  std::string s;
  if (inf_nan > 0) s += " (" + std::to_string(inf_nan) + " ±inf became NaN)";
  if (nan_zero > 0) s += " (" + std::to_string(nan_zero) + " NaN became 0)";
  if (nan_inf > 0) s += " (" + std::to_string(nan_inf) + " NaN became ±inf: a store that truncates NaN's mantissa?)";
  if (saturated > 0) {
    s += " (" + std::to_string(saturated) + " ±inf became ±" + num(top) + ", the largest finite " +
         std::string(dtype_name(spec.storage)) + " value: a saturating store)";
  }
  if (inf_finite > 0) s += " (" + std::to_string(inf_finite) + " ±inf became finite)";
  return s;
}

}  // namespace kc::notes
