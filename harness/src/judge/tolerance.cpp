// The tolerance model and element-wise comparison (see tolerance.h).
#include "judge/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/format.h"

namespace kc {
namespace {

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
  for (int64_t k : unravel(first, cand.shape)) where += (where.empty() ? "" : ",") + std::to_string(k);
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

// NaN meets NaN and an infinity meets the same infinity; anything else non-finite fails.
bool special_agrees(double cand, double ref) {
  if (std::isnan(ref)) return std::isnan(cand);
  if (std::isinf(ref)) return cand == ref;
  return false;
}

// Exactly one of them overflowed to an infinity and the other is finite, of that sign.
bool one_overflowed(double cand, double ref) {
  if (std::isinf(cand) == std::isinf(ref) || std::isnan(cand) || std::isnan(ref)) return false;
  return std::signbit(cand) == std::signbit(ref);
}

// The finite side, moved toward the infinity by the error allowed before the output
// rounding, rounds to it in the output dtype (round to nearest overflows at the largest
// finite value plus half an ulp): a correct kernel may then give either, a saturating
// one (65504 for 76800 in f16) still fails on its value, and inf for a representable
// 65504 fails (the output rounding is what is judged, so its own allowance u_out*|ref|
// is left out).
bool overflow_agrees(const ToleranceSpec& s, double finite, double abs_sum, double slack) {
  const double before =
      s.tolerance.kind == ToleranceKind::kBound ? element_bound(s, 0.0, abs_sum) : element_bound(s, finite, abs_sum);
  return std::isinf(round_to(s.storage, std::copysign(std::abs(finite) + before + slack, finite)));
}

// Slack lets the right value lie anywhere within it of ref, on either side: an infinity
// is right where ref, moved by the slack and the error allowed before the output rounding
// toward it, rounds to it in the output dtype (a relu mask the data cannot decide, over
// terms past the dtype's range). As in overflow_agrees, the output rounding's own
// allowance is left out (a representable 65504 stored as inf still fails), and an
// unbounded allowance allows nothing here (the element is then counted as unbounded).
bool slack_reaches(const ToleranceSpec& s, double cand, double ref, double abs_sum, double slack) {
  if (!std::isinf(cand) || !std::isfinite(ref) || !(slack > 0.0) || !std::isfinite(abs_sum)) return false;
  const double before = s.tolerance.kind == ToleranceKind::kBound   ? element_bound(s, 0.0, abs_sum)
                        : s.tolerance.kind == ToleranceKind::kExact ? 0.0
                                                                    : element_bound(s, ref, abs_sum);
  if (!(before < INFINITY) || !(slack < INFINITY)) return false;
  return round_to(s.storage, ref + std::copysign(slack + before, cand)) == cand;
}

}  // namespace

bool overflow_explains(const ToleranceSpec& spec, double cand, double ref, double abs_sum) {
  return std::isinf(cand) && one_overflowed(cand, ref) && std::isfinite(abs_sum) &&
         overflow_agrees(spec, ref, abs_sum, 0.0);
}

bool accumulator_may_overflow(const ToleranceSpec& spec, int64_t i, double abs_sum) {
  if (spec.tolerance.kind == ToleranceKind::kExact) return false;  // exact sums cannot overflow
  const bool aligned = spec.finite_terms != nullptr && i < spec.finite_terms->size();
  const double part = aligned ? (*spec.finite_terms)[i] : std::isfinite(abs_sum) ? abs_sum : 0.0;
  return !std::isnan(part) && part * spec.sum_scale > largest_finite(accumulation_of(spec));
}

bool oracle_may_overflow(const ToleranceSpec& spec, int64_t i, double abs_sum) {
  if (spec.tolerance.kind == ToleranceKind::kExact) return false;
  const bool reach_known = spec.nonfinite_reach != nullptr && i < spec.nonfinite_reach->size();
  if (!spec.inputs_finite && !(reach_known && (*spec.nonfinite_reach)[i] < kNonfiniteReached)) return false;
  const bool aligned = spec.finite_terms != nullptr && i < spec.finite_terms->size();
  const double part = aligned ? (*spec.finite_terms)[i] : abs_sum;
  return !std::isnan(part) && part * spec.sum_scale > largest_finite(DType::kF64);
}

DType accumulation_of(const ToleranceSpec& s) {
  return s.accumulation ? *s.accumulation : default_accumulation(s.storage);
}

namespace {
// The transform algorithm's relative error, times the terms' magnitude (0 for direct
// sums): its growth times the probabilistic gamma of Higham and Mary ("A new approach to
// probabilistic rounding error analysis", SISC 41(5), 2019), lambda sqrt(K) u, which
// holds with probability at least 1 - 2 exp(-lambda^2 / 2) when rounding errors are
// independent and of mean zero. The worst-case gamma(K) assumes every rounding of every
// tile aligned; with the growth on top it would let most bugs through (docs/checks.md).
double transform_factor(const ToleranceSpec& s) {
  if (!(s.transform_growth > 0.0)) return 0.0;
  const double k = static_cast<double>(s.n + s.transform_terms);
  return s.transform_growth * kTransformLambda * std::sqrt(k) * unit_roundoff(accumulation_of(s));
}
}  // namespace

double element_bound(const ToleranceSpec& s, double ref, double abs_sum) {
  switch (s.tolerance.kind) {
    case ToleranceKind::kExact:
      return 0.0;
    case ToleranceKind::kExplicit: {
      // A case's rtol and atol were written for direct sums; a transform's own rounding
      // (spread over its tile) comes on top of them.
      const double transform = transform_factor(s);
      if (!(transform < INFINITY)) return INFINITY;
      const double extra = transform > 0.0 ? kBoundSafety * transform * abs_sum : 0.0;
      return s.tolerance.atol + s.tolerance.rtol * std::abs(ref) + s.flush_atol + extra;
    }
    case ToleranceKind::kBound:
      break;
  }
  const DType acc = accumulation_of(s);
  const double u_acc = unit_roundoff(acc);
  const double u_out = unit_roundoff(s.storage);
  const double underflow = static_cast<double>(s.n) * underflow_unit(acc) + underflow_unit(s.storage);
  const double gamma = gamma_n(s.n, u_acc);
  if (!(gamma < INFINITY)) return INFINITY;  // n * u >= 1 (never inf * 0 = NaN); validate refuses such cases
  const double transform = transform_factor(s);
  if (!(transform < INFINITY)) return INFINITY;  // no bound is known for the algorithm
  return kBoundSafety * ((gamma + transform) * abs_sum + underflow) + u_out * std::abs(ref) + s.flush_atol;
}

double element_noise(const ToleranceSpec& s, double ref, double abs_sum) {
  if (s.tolerance.kind == ToleranceKind::kExplicit) return element_bound(s, ref, abs_sum);
  const DType acc = accumulation_of(s);
  const double u_acc = unit_roundoff(acc);
  if (!(gamma_n(s.n, u_acc) < INFINITY)) return INFINITY;
  const double transform = transform_factor(s);
  if (!(transform < INFINITY)) return INFINITY;
  const double underflow = static_cast<double>(s.n) * underflow_unit(acc) + underflow_unit(s.storage);
  const double sums = std::sqrt(static_cast<double>(s.n) + 1.0) * u_acc;
  return (sums + transform) * abs_sum + underflow + unit_roundoff(s.storage) * std::abs(ref) + s.flush_atol;
}

void mark_failed(CheckResult& r) {
  if (r.disposition != Disposition::kFailed) r.worst.clear();
  r.disposition = Disposition::kFailed;
}

double gamma_n(int64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
}

void compare_tensors(const std::string& tensor, const Tensor& cand, const Tensor& ref, const Tensor* abs_pass,
                     const ToleranceSpec& spec, CheckResult& out, const Tensor* slack) {
  if (cand.shape != ref.shape || cand.size() != ref.size()) {  // a resized buffer is never read past its end
    out.disposition = Disposition::kFailed;
    out.message +=
        tensor + ": shape " + dims_to_string(cand.shape) + " but the contract says " + dims_to_string(ref.shape);
    if (cand.size() != element_count(cand.shape))
      out.message += " (its buffer holds " + std::to_string(cand.size()) + " elements)";
    out.message += "; ";
    return;
  }
  if (!spec.note.empty() && out.message.find(spec.note) == std::string::npos) out.message += spec.note + "; ";
  std::vector<WorstPoint> bad;
  std::vector<std::pair<double, double>> bad_all;  // (cand, ref) of every failing element
  int64_t failures = 0, unbounded = 0, infinite_terms = 0, overflowed_sums = 0, unjudged = 0, narrow_sums = 0;
  int64_t holds_zero = 0, nonzero = 0;  // elements whose bound reaches 0; elements not 0
  int64_t closest = -1;                 // the element nearest its bound, when every element is within it
  double closest_ratio = 0.0, closest_bound = 0.0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double c = cand[i], r = ref[i];
    const double finite = std::isinf(r) ? c : r;  // the side the bound is taken from
    const double abs_sum = abs_pass ? (*abs_pass)[i] : std::abs(finite);
    const double extra = slack ? (*slack)[i] : 0.0;
    if (!std::isfinite(extra)) {  // an infinity or NaN may or may not be in the sum: any value is correct
      ++unjudged;
      continue;
    }
    // Judged as an overflow only where a finite sum can have made the infinity (not an inf
    // input: then abs_sum is not finite) and, with the infinity on the reference's side,
    // only for an unrounded candidate (a stored 65504 is final).
    const bool overflow = one_overflowed(c, r) && std::isfinite(abs_sum) && (std::isinf(c) || spec.cand_unrounded);
    // relu(-inf) = 0: its terms carry no bound, and a correct kernel's relu gives 0 exactly.
    const bool relu_of_inf = spec.relu_output && r == 0.0 && !std::isfinite(abs_sum);
    const bool special = ((!std::isfinite(r) || !std::isfinite(c)) && !overflow) || relu_of_inf;
    // NaN or an infinity from a partial sum past the accumulator's range, or relu's 0 of a
    // -inf one: what a correct kernel's order may give where its finite terms overflow.
    const bool overflow_value = !std::isfinite(c) || (spec.relu_output && c == 0.0);
    const bool may_overflow = accumulator_may_overflow(spec, i, abs_sum);
    // Past f64's range the terms' magnitudes carry no bound for a finite value either.
    const bool no_bound = std::isfinite(c) && std::isfinite(r) && !std::isfinite(abs_sum);
    if (may_overflow && ((overflow_value && c != r && !special_agrees(c, r)) || no_bound)) {
      ++overflowed_sums;
      continue;
    }
    // The oracle's order overflowed: any finite value, the dtype's largest too, may be
    // another order's (numpy's pairwise sum gave +1.8e308 where the oracle's gave -inf).
    if (std::isinf(r) && std::isfinite(c) && oracle_may_overflow(spec, i, abs_sum)) {
      ++overflowed_sums;
      continue;
    }
    // A correct kernel's value may lie `extra` further from ref, and is then rounded to the
    // output dtype relative to itself: the slack carries its own output rounding.
    const double slack_rounded =
        spec.tolerance.kind == ToleranceKind::kBound ? extra * (1.0 + unit_roundoff(spec.storage)) : extra;
    if (slack_reaches(spec, c, r, abs_sum, slack_rounded)) continue;
    const double bound = special ? 0.0 : element_bound(spec, finite, abs_sum) + slack_rounded;
    if (!special && !(bound < INFINITY)) {  // n * u_acc >= 1, or infinite terms: any error is allowed
      ++unbounded;
      infinite_terms += !std::isfinite(abs_sum);
      continue;
    }
    if (!special && !overflow) {
      nonzero += r != 0.0;
      // The model's bound alone: slack that swamps a value is its caller's to judge.
      holds_zero += std::abs(r) <= bound - slack_rounded && spec.tolerance.kind != ToleranceKind::kExact;
    }
    const bool overflow_ok = overflow && overflow_agrees(spec, finite, abs_sum, extra);
    const bool special_ok = relu_of_inf ? c == 0.0 : special_agrees(c, r);
    const double err = special    ? (special_ok ? 0.0 : INFINITY)
                       : overflow ? (overflow_ok ? 0.0 : INFINITY)
                                  : std::abs(c - r);
    const bool ok = special    ? special_ok
                    : overflow ? overflow_ok
                               : (spec.tolerance.kind == ToleranceKind::kExact ? c == r : err <= bound);
    const double ratio = ok ? (bound > 0 ? err / bound : 0.0) : (bound > 0 ? err / bound : INFINITY);
    out.max_error_ratio = std::max(out.max_error_ratio, ratio);
    if (std::isfinite(err)) out.max_abs_error = std::max(out.max_abs_error, err);
    if (ok && !special && !overflow && ratio > closest_ratio) closest = i, closest_ratio = ratio, closest_bound = bound;
    if (ok) continue;
    ++failures;
    narrow_sums += !special && !overflow && within_narrow_sum(spec, err, finite, abs_sum, slack_rounded);
    bad.push_back({tensor, unravel(i, ref.shape), c, r, bound});
    bad_all.push_back({c, r});
  }
  if (unjudged > 0) {
    out.message += tensor + ": " + std::to_string(unjudged) + " of " + std::to_string(ref.size()) +
                   " elements unjudged: a non-finite term may or may not be in their sum (its slack is not finite); ";
  }
  if (overflowed_sums > 0) {
    out.message += tensor + ": " + std::to_string(overflowed_sums) +
                   " unjudged or non-finite (or relu's 0) where the " +
                   "oracle's is another value, allowed: their finite terms pass " +
                   std::string(dtype_name(accumulation_of(spec))) + "'s range, so partial sums may overflow; ";
  }
  if (failures == 0 && ref.size() > 0 && unjudged + overflowed_sums == ref.size()) {
    // Every element left unjudged: a pass would say nothing of the kernel.
    if (out.disposition == Disposition::kPassed) out.disposition = Disposition::kMistrusted;
    out.message += tensor + ": no element could be judged; ";
  }
  if (failures == 0 && unbounded > 0) {
    if (out.disposition == Disposition::kPassed) out.disposition = Disposition::kMistrusted;
    const DType acc = accumulation_of(spec);
    // A finite value whose terms' magnitudes sum to infinity: an infinite input reached
    // it and something made it finite again (relu of -inf is 0).
    const std::string why = spec.tolerance.kind == ToleranceKind::kExplicit ? "the explicit tolerance overflows"
                            : !(spec.flush_atol < INFINITY)
                                ? "the declared subnormal flush allows 2^emin per term times the largest input, "
                                  "which overflows for inputs this large"
                            : !(spec.transform_growth < INFINITY)
                                ? "no error bound is known for the transform algorithm the backend declares"
                            : infinite_terms > 0
                                ? "an infinite input reaches " +
                                      std::string(infinite_terms < unbounded ? "some of " : "") +
                                      "them, and a finite value there carries no bound"
                                : "sums of " + std::to_string(spec.n) + " terms in " + std::string(dtype_name(acc)) +
                                      ": n * u >= 1; give an explicit tolerance: {rtol, atol}";
    out.message += tensor + ": the bound allows any error at " + std::to_string(unbounded) + " of " +
                   std::to_string(ref.size()) + " elements (" + why + "); ";
  }
  if (failures == 0 && unbounded == 0 && nonzero > 0 && holds_zero == ref.size()) {
    // Every element's bound reaches 0: a tensor of zeros would pass as well.
    if (out.disposition == Disposition::kPassed) out.disposition = Disposition::kMistrusted;
    char share[32];
    std::snprintf(share, sizeof share, "%.3g", kBoundSafety * gamma_n(spec.n, unit_roundoff(accumulation_of(spec))));
    const bool long_sums = kBoundSafety * gamma_n(spec.n, unit_roundoff(accumulation_of(spec))) >= 0.5;
    const std::string why =
        spec.tolerance.kind == ToleranceKind::kExplicit ? "the explicit tolerance is as large as every value"
        : long_sums                                     ? "a sum of " + std::to_string(spec.n) + " terms in " +
                          std::string(dtype_name(accumulation_of(spec))) + " may be off by " + share +
                          " of its terms' absolute sum; a smaller case or an explicit tolerance can be judged"
                    : "every value is within the bound's rounding and underflow allowance of 0";
    out.message +=
        tensor + ": the bound reaches 0 at every element, so a kernel that writes zeros would pass (" + why + "); ";
  }
  if (failures == 0) {
    // A pass reports its worst coordinate too (docs/checks.md, "Dispositions"), as the check's one worst point:
    // the element of all its tensors that came nearest its bound.
    if (closest < 0 || out.disposition != Disposition::kPassed) return;
    const WorstPoint p{tensor, unravel(closest, ref.shape), cand[closest], ref[closest], closest_bound};
    auto ratio_of = [](const WorstPoint& w) {
      return w.bound > 0 ? std::abs(w.candidate - w.reference) / w.bound : 0.0;
    };
    if (out.worst.empty())
      out.worst.push_back(p);
    else if (out.worst.size() == 1 && ratio_of(out.worst[0]) < closest_ratio)
      out.worst[0] = p;
    return;
  }
  mark_failed(out);  // a pass's closest point is not a failure
  std::stable_sort(bad.begin(), bad.end(), [](const WorstPoint& a, const WorstPoint& b) {
    const double ea = a.bound > 0 ? std::abs(a.candidate - a.reference) / a.bound : INFINITY;
    const double eb = b.bound > 0 ? std::abs(b.candidate - b.reference) / b.bound : INFINITY;
    return (std::isnan(ea) ? INFINITY : ea) > (std::isnan(eb) ? INFINITY : eb);
  });
  bad.resize(std::min<size_t>(bad.size(), 5));
  out.worst.insert(out.worst.end(), bad.begin(), bad.end());
  out.message += tensor + ": " + std::to_string(failures) + " of " + std::to_string(ref.size()) +
                 " elements outside the tolerance";
  out.message += flushed(spec, failures, bad_all) + summed_narrow(spec, failures, narrow_sums) +
                 nonfinite_changes(spec, bad_all) + not_stored_in(spec, tensor, cand) + "; ";
}

}  // namespace kc
