// The tolerance model and element-wise comparison (see tolerance.h).
#include "judge/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/format.h"
#include "judge/failure_notes.h"

namespace kc {
namespace {

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
// The error allowed before the output rounding: the bound model's without its u_out*|ref|
// (taken at ref = 0), an explicit tolerance's at ref, 0 for exact.
double error_before_rounding(const ToleranceSpec& s, double ref, double abs_sum) {
  return element_bound(s, s.tolerance.kind == ToleranceKind::kBound ? 0.0 : ref, abs_sum);
}

bool overflow_agrees(const ToleranceSpec& s, double finite, double abs_sum, double slack) {
  const double before = error_before_rounding(s, finite, abs_sum);
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
  const double before = error_before_rounding(s, ref, abs_sum);
  if (!(before < INFINITY) || !(slack < INFINITY)) return false;
  return round_to(s.storage, ref + std::copysign(slack + before, cand)) == cand;
}

}  // namespace

bool overflow_explains(const ToleranceSpec& spec, double cand, double ref, double abs_sum) {
  return std::isinf(cand) && one_overflowed(cand, ref) && std::isfinite(abs_sum) &&
         overflow_agrees(spec, ref, abs_sum, 0.0);
}

namespace {

// Whether element i's finite terms, summed in some order (times sum_scale), pass `acc`'s
// range. abs_sum stands in where finite_terms does not reach i; an infinite abs_sum counts
// only when `no_infinite_term` (then only finite terms can have made it).
bool terms_pass(const ToleranceSpec& spec, int64_t i, double abs_sum, DType acc, bool no_infinite_term) {
  if (spec.tolerance.kind == ToleranceKind::kExact) return false;  // exact sums cannot overflow
  const bool aligned = spec.finite_terms != nullptr && i < spec.finite_terms->size();
  const double part = aligned ? (*spec.finite_terms)[i] : std::isfinite(abs_sum) || no_infinite_term ? abs_sum : 0.0;
  return !std::isnan(part) && part * spec.sum_scale > largest_finite(acc);
}

}  // namespace

bool accumulator_may_overflow(const ToleranceSpec& spec, int64_t i, double abs_sum) {
  return terms_pass(spec, i, abs_sum, accumulation_of(spec), false);
}

bool oracle_may_overflow(const ToleranceSpec& spec, int64_t i, double abs_sum) {
  const bool reach_known = spec.nonfinite_reach != nullptr && i < spec.nonfinite_reach->size();
  if (!spec.inputs_finite && !(reach_known && (*spec.nonfinite_reach)[i] < kNonfiniteReached)) return false;
  return terms_pass(spec, i, abs_sum, DType::kF64, true);
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

namespace {

// What compare_tensors counts over a tensor's elements.
struct Tally {
  std::vector<WorstPoint> bad;
  std::vector<std::pair<double, double>> bad_all;  // (cand, ref) of every failing element
  int64_t failures = 0, unbounded = 0, infinite_terms = 0, overflowed_sums = 0, unjudged = 0, narrow_sums = 0;
  int64_t holds_zero = 0, nonzero = 0;  // elements whose bound reaches 0; elements not 0
  int64_t closest = -1;                 // the element nearest its bound, when every element is within it
  double closest_ratio = 0.0, closest_bound = 0.0;
};

// One element as compare_tensors sees it: candidate, reference, its terms' magnitude
// (abs_sum) and the slack a caller allows it.
struct Element {
  int64_t i;
  double c, r, abs_sum, extra;
  double finite() const { return std::isinf(r) ? c : r; }  // the side the bound is taken from
};

// Elements no value can be judged at: counted (and true) where a non-finite term may or
// may not be in the sum (slack not finite), or where partial sums past the accumulator's
// range, the oracle's own included, may give what the candidate gave.
bool unjudged_element(const ToleranceSpec& spec, const Element& e, Tally& t) {
  const double c = e.c, r = e.r;
  if (!std::isfinite(e.extra)) {
    ++t.unjudged;
    return true;
  }
  // NaN or an infinity from a partial sum past the accumulator's range, or relu's 0 of a
  // -inf one: what a correct kernel's order may give where its finite terms overflow.
  const bool overflow_value = !std::isfinite(c) || (spec.relu_output && c == 0.0);
  const bool may_overflow = accumulator_may_overflow(spec, e.i, e.abs_sum);
  // Past f64's range the terms' magnitudes carry no bound for a finite value either.
  const bool no_bound = std::isfinite(c) && std::isfinite(r) && !std::isfinite(e.abs_sum);
  // The oracle's order overflowed: any finite value, the dtype's largest too, may be
  // another order's (numpy's pairwise sum gave +1.8e308 where the oracle's gave -inf).
  const bool oracle_order = std::isinf(r) && std::isfinite(c) && oracle_may_overflow(spec, e.i, e.abs_sum);
  if ((may_overflow && ((overflow_value && c != r && !special_agrees(c, r)) || no_bound)) || oracle_order) {
    ++t.overflowed_sums;
    return true;
  }
  return false;
}

// Judges one element against its bound, into the tally and the result's error ratios.
void judge_element(const std::string& tensor, const Tensor& ref, const ToleranceSpec& spec, const Element& e, Tally& t,
                   CheckResult& out) {
  const double c = e.c, r = e.r, finite = e.finite(), abs_sum = e.abs_sum;
  // Judged as an overflow only where a finite sum can have made the infinity (not an inf
  // input: then abs_sum is not finite) and, with the infinity on the reference's side,
  // only for an unrounded candidate (a stored 65504 is final).
  const bool overflow = one_overflowed(c, r) && std::isfinite(abs_sum) && (std::isinf(c) || spec.cand_unrounded);
  // relu(-inf) = 0: its terms carry no bound, and a correct kernel's relu gives 0 exactly.
  const bool relu_of_inf = spec.relu_output && r == 0.0 && !std::isfinite(abs_sum);
  const bool special = ((!std::isfinite(r) || !std::isfinite(c)) && !overflow) || relu_of_inf;
  // A correct kernel's value may lie `extra` further from ref, and is then rounded to the
  // output dtype relative to itself: the slack carries its own output rounding.
  const double slack =
      spec.tolerance.kind == ToleranceKind::kBound ? e.extra * (1.0 + unit_roundoff(spec.storage)) : e.extra;
  if (slack_reaches(spec, c, r, abs_sum, slack)) return;
  const double bound = special ? 0.0 : element_bound(spec, finite, abs_sum) + slack;
  if (!special && !(bound < INFINITY)) {  // n * u_acc >= 1, or infinite terms: any error is allowed
    ++t.unbounded;
    t.infinite_terms += !std::isfinite(abs_sum);
    return;
  }
  if (!special && !overflow) {
    t.nonzero += r != 0.0;
    // The model's bound alone: slack that swamps a value is its caller's to judge.
    t.holds_zero += std::abs(r) <= bound - slack && spec.tolerance.kind != ToleranceKind::kExact;
  }
  const bool overflow_ok = overflow && overflow_agrees(spec, finite, abs_sum, e.extra);
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
  if (ok && !special && !overflow && ratio > t.closest_ratio)
    t.closest = e.i, t.closest_ratio = ratio, t.closest_bound = bound;
  if (ok) return;
  ++t.failures;
  t.narrow_sums += !special && !overflow && notes::within_narrow_sum(spec, err, finite, abs_sum, slack);
  t.bad.push_back({tensor, unravel(e.i, ref.shape), c, r, bound});
  t.bad_all.push_back({c, r});
}

// Why the bound allows any error at the unbounded elements.
std::string unbounded_why(const ToleranceSpec& spec, const Tally& t) {
  if (spec.tolerance.kind == ToleranceKind::kExplicit) return "the explicit tolerance overflows";
  if (!(spec.flush_atol < INFINITY)) {
    return "the declared subnormal flush allows 2^emin per term times the largest input, which overflows for inputs "
           "this large";
  }
  if (!(spec.transform_growth < INFINITY))
    return "no error bound is known for the transform algorithm the backend declares";
  // A finite value whose terms' magnitudes sum to infinity: an infinite input reached
  // it and something made it finite again (relu of -inf is 0).
  if (t.infinite_terms > 0) {
    return "an infinite input reaches " + std::string(t.infinite_terms < t.unbounded ? "some of " : "") +
           "them, and a finite value there carries no bound";
  }
  return "sums of " + std::to_string(spec.n) + " terms in " + std::string(dtype_name(accumulation_of(spec))) +
         ": n * u >= 1; give an explicit tolerance: {rtol, atol}";
}

// What a pass cannot say: elements left unjudged or unbounded, and bounds that reach 0
// everywhere (a tensor of zeros would pass); MISTRUSTED where nothing else failed.
void note_blind_spots(const std::string& tensor, int64_t size, const ToleranceSpec& spec, const Tally& t,
                      CheckResult& out) {
  auto mistrust = [&] {
    if (out.disposition == Disposition::kPassed) out.disposition = Disposition::kMistrusted;
  };
  if (t.unjudged > 0) {
    out.message += tensor + ": " + std::to_string(t.unjudged) + " of " + std::to_string(size) +
                   " elements unjudged: a non-finite term may or may not be in their sum (its slack is not finite); ";
  }
  if (t.overflowed_sums > 0) {
    out.message += tensor + ": " + std::to_string(t.overflowed_sums) +
                   " unjudged or non-finite (or relu's 0) where the " +
                   "oracle's is another value, allowed: their finite terms pass " +
                   std::string(dtype_name(accumulation_of(spec))) + "'s range, so partial sums may overflow; ";
  }
  if (t.failures > 0) return;
  if (size > 0 && t.unjudged + t.overflowed_sums == size) {  // a pass would say nothing of the kernel
    mistrust();
    out.message += tensor + ": no element could be judged; ";
  }
  if (t.unbounded > 0) {
    mistrust();
    out.message += tensor + ": the bound allows any error at " + std::to_string(t.unbounded) + " of " +
                   std::to_string(size) + " elements (" + unbounded_why(spec, t) + "); ";
  }
  if (t.unbounded == 0 && t.nonzero > 0 && t.holds_zero == size) {
    mistrust();
    const double share = kBoundSafety * gamma_n(spec.n, unit_roundoff(accumulation_of(spec)));
    char share_text[32];
    std::snprintf(share_text, sizeof share_text, "%.3g", share);
    const std::string why =
        spec.tolerance.kind == ToleranceKind::kExplicit ? "the explicit tolerance is as large as every value"
        : share >= 0.5                                  ? "a sum of " + std::to_string(spec.n) + " terms in " +
                             std::string(dtype_name(accumulation_of(spec))) + " may be off by " + share_text +
                             " of its terms' absolute sum; a smaller case or an explicit tolerance can be judged"
                       : "every value is within the bound's rounding and underflow allowance of 0";
    out.message +=
        tensor + ": the bound reaches 0 at every element, so a kernel that writes zeros would pass (" + why + "); ";
  }
}

// A pass reports its worst coordinate too (docs/checks.md, "Dispositions"), as the
// check's one worst point: the element of all its tensors that came nearest its bound.
void keep_closest(const std::string& tensor, const Tensor& cand, const Tensor& ref, const Tally& t, CheckResult& out) {
  if (t.closest < 0 || out.disposition != Disposition::kPassed) return;
  const WorstPoint p{tensor, unravel(t.closest, ref.shape), cand[t.closest], ref[t.closest], t.closest_bound};
  auto ratio_of = [](const WorstPoint& w) { return w.bound > 0 ? std::abs(w.candidate - w.reference) / w.bound : 0.0; };
  if (out.worst.empty())
    out.worst.push_back(p);
  else if (out.worst.size() == 1 && ratio_of(out.worst[0]) < t.closest_ratio)
    out.worst[0] = p;
}

// The failure: its five worst elements and what the failing values show.
void report_failures(const std::string& tensor, const Tensor& cand, int64_t size, const ToleranceSpec& spec, Tally& t,
                     CheckResult& out) {
  mark_failed(out);  // a pass's closest point is not a failure
  std::stable_sort(t.bad.begin(), t.bad.end(), [](const WorstPoint& a, const WorstPoint& b) {
    const double ea = a.bound > 0 ? std::abs(a.candidate - a.reference) / a.bound : INFINITY;
    const double eb = b.bound > 0 ? std::abs(b.candidate - b.reference) / b.bound : INFINITY;
    return (std::isnan(ea) ? INFINITY : ea) > (std::isnan(eb) ? INFINITY : eb);
  });
  t.bad.resize(std::min<size_t>(t.bad.size(), 5));
  out.worst.insert(out.worst.end(), t.bad.begin(), t.bad.end());
  out.message +=
      tensor + ": " + std::to_string(t.failures) + " of " + std::to_string(size) + " elements outside the tolerance";
  out.message += notes::flushed(spec, t.failures, t.bad_all) + notes::summed_narrow(spec, t.failures, t.narrow_sums) +
                 notes::nonfinite_changes(spec, t.bad_all) + notes::not_stored_in(spec, tensor, cand) + "; ";
}

}  // namespace

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
  Tally t;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double c = cand[i], r = ref[i];
    const Element e{i, c, r, abs_pass ? (*abs_pass)[i] : std::abs(std::isinf(r) ? c : r), slack ? (*slack)[i] : 0.0};
    if (!unjudged_element(spec, e, t)) judge_element(tensor, ref, spec, e, t, out);
  }
  note_blind_spots(tensor, ref.size(), spec, t, out);
  if (t.failures == 0)
    keep_closest(tensor, cand, ref, t, out);
  else
    report_failures(tensor, cand, ref.size(), spec, t, out);
}

}  // namespace kc
