// The tolerance model (docs/checks.md, "The tolerance model").
//   bound (default), per element:
//     |cand - ref| <= c * gamma(n, u_acc) * sum_i |a_i * b_i| + u_out * |ref|
//                     + c * (n * eta_acc + eta_out)
//   with n the reduction length, gamma(n, u) = n*u / (1 - n*u), sum_i |a_i b_i| from a
//   reference pass on absolute values, u_acc and u_out the unit roundoffs of the
//   accumulation and output dtypes, c a small safety constant and eta the underflow unit;
//   exact: bitwise equality (integer fills make every sum exact);
//   {rtol, atol}: |cand - ref| <= atol + rtol * |ref|.
// NaN in the expected tensor is never a wildcard: NaN must meet NaN, inf the same inf.
// More on the method: docs/notes.md, section harness/src/judge/tolerance.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kc/case.h"
#include "kc/result.h"
#include "kc/tensor.h"

namespace kc {

inline constexpr double kBoundSafety = 2.0;
// Standard deviations of a transform's rounding allowed (judge/tolerance.cpp: its failure
// probability per sum is at most 2 exp(-lambda^2 / 2) = 3e-8).
inline constexpr double kTransformLambda = 6.0;

double gamma_n(int64_t n, double u);

// The allowed error per element for the case's tolerance. abs_pass holds
// sum_i |a_i b_i| per element (only used by `bound`); n is the reduction length.
// nonfinite_reach_pass (judge/absolute_pass.h) marks each non-finite input so: an
// element it reaches is at least kNonfiniteReached (the mark over a divisor or a count).
inline constexpr double kNonfiniteMark = 0x1p600;
inline constexpr double kNonfiniteReached = 0x1p400;

struct ToleranceSpec {
  Tolerance tolerance;
  DType storage = DType::kF32;
  int64_t n = 1;
  std::optional<DType> accumulation{};  // empty: default_accumulation(storage)
  // The candidate's values are not rounded to `storage` (the f64 oracle against golden
  // tensors): a finite one may still round to an expected infinity.
  bool cand_unrounded = false;
  // A declared transform algorithm (judge/transform_bound.h): the bound adds
  // c * transform_growth * lambda sqrt(n + transform_terms) u_acc * abs_sum, abs_sum
  // spread over the output plane by the caller. 0: direct sums of products.
  double transform_growth = 0.0;
  int64_t transform_terms = 0;
  std::string note{};  // said once in the check's message when set (why exact was not demanded)
  // A declared flush of subnormals (FTZ): the absolute error a flush may add, one
  // smallest normal number for the result and one per term for inputs flushed on
  // conversion (tolerance_for: 2^emin * (1 + n * the largest input magnitude)). 0: none.
  double flush_atol = 0.0;
  // y of a relu (conv_bias_relu): where the oracle's y is 0 and its terms' absolute sum
  // is infinite, the pre-activation was -inf (an infinite input reached it) and relu
  // made it 0, which a correct kernel's relu gives exactly too: judged as 0, not unbounded.
  bool relu_output = false;
  // Per element, the sum of |a_i * b_i| over the finite terms alone (finite_part_pass),
  // aligned with the compared tensor; null where the tensor is no sum or every input is
  // finite (the abs_pass is then that part where it is finite). Where that part times
  // sum_scale passes the accumulator's largest finite value, a correct kernel's partial
  // sums may overflow in its order, and meet an infinity of the other sign: any
  // non-finite value is allowed there.
  const Tensor* finite_terms = nullptr;
  // The oracle sums in f64, so its own partial sums may overflow where the terms pass
  // f64's range (f64 data): its ±inf is then its order's, and a finite value of another
  // order is as right, unless an infinite term reaches the element. What says none does:
  // every input finite (inputs_finite), or the element of nonfinite_reach_pass below
  // kNonfiniteReached. Neither known: the oracle's infinity is taken as the truth.
  bool inputs_finite = false;
  const Tensor* nonfinite_reach = nullptr;
  // From abs_pass to the largest partial sum a kernel may form: an average pool's
  // divisor (its abs_pass holds sum |x| / divisor, a kernel may divide last).
  double sum_scale = 1.0;
};

// Whether element i's finite terms can overflow spec's accumulator in some order (see
// ToleranceSpec::finite_terms); abs_sum is abs_pass's element.
bool accumulator_may_overflow(const ToleranceSpec& spec, int64_t i, double abs_sum);
// Whether the oracle's own f64 partial sums may have overflowed at element i with no
// infinite term there (see ToleranceSpec::inputs_finite).
bool oracle_may_overflow(const ToleranceSpec& spec, int64_t i, double abs_sum);

// The allowed |cand - ref| of one element: 0 for exact, atol + rtol*|ref| for explicit,
// c*gamma(n, u_acc)*abs_sum + u_out*|ref| + c*(n*eta_acc + eta_out) for bound
// (abs_sum = sum_i |a_i b_i|).
double element_bound(const ToleranceSpec& spec, double ref, double abs_sum);

// The spread (one standard deviation) of a correct kernel's error in one element under
// the probabilistic model of rounding (Higham and Mary: independent rounding errors of
// mean zero): sqrt(n + 1) u_acc abs_sum for the products and adds, plus the output's
// rounding, the underflow and flush terms and a transform's own bound. For sums of many
// elements' errors (the adjoint's inner products), where worst cases do not add up.
// explicit: element_bound (the case's own numbers).
double element_noise(const ToleranceSpec& spec, double ref, double abs_sum);

// cand is the infinity that ref (finite, of its sign, made of a sum whose absolute
// value is abs_sum) rounds to in spec.storage: the overflow rule of compare_tensors, for
// checks that compare sums of their own.
bool overflow_explains(const ToleranceSpec& spec, double cand, double ref, double abs_sum);

// spec.accumulation, or default_accumulation(spec.storage).
DType accumulation_of(const ToleranceSpec& spec);

// Marks r FAILED; the first failure drops a pass's closest point (compare_tensors), so
// that the worst points of a failed check are failures only. Call before adding them.
void mark_failed(CheckResult& r);

// Compares cand with ref element by element; fills max_abs_error, max_error_ratio,
// worst points (up to 5 failing elements; while nothing has failed, the one element
// nearest its bound over the calls on this result) and the disposition (FAILED on any element over its bound or
// a shape mismatch; MISTRUSTED, when nothing failed, if the bound model allows any
// error somewhere: n * u_acc >= 1, a long sum in a 16-bit accumulator, or if every
// element's bound, slack aside, reaches 0 while some reference value is not 0: a tensor
// of zeros would pass). abs_pass may be null for exact and explicit tolerances; for bound
// it must have ref's shape.
// slack, when given, adds a per-element allowance to the bound (e.g. for contributions
// that a correct kernel may or may not include); an element whose slack is not finite
// (an infinity that may or may not be included) is left unjudged, and the message says
// how many.
void compare_tensors(const std::string& tensor, const Tensor& cand, const Tensor& ref, const Tensor* abs_pass,
                     const ToleranceSpec& spec, CheckResult& out, const Tensor* slack = nullptr);

}  // namespace kc
