// Numeric helpers shared by the checks that prove identities rather than compare with
// the oracle element by element (gradcheck, adjoint, weight_share): the tolerance
// model's bound for one element, a tally of bounded comparisons with the worst points,
// f64 inner products, input screening and a parallel loop. Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "checks/checks.h"
#include "core/format.h"
#include "core/task_threads.h"
#include "judge/tolerance.h"

namespace kc::checks {

// Unit roundoff of the f64 arithmetic the checks themselves do.
inline double u64() { return unit_roundoff(DType::kF64); }

inline double dot(const Tensor& a, const Tensor& b) {
  double s = 0.0;
  for (int64_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

inline double abs_dot(const Tensor& a, const Tensor& b) {
  double s = 0.0;
  for (int64_t i = 0; i < a.size() && i < b.size(); ++i) s += std::abs(a[i] * b[i]);
  return s;
}

// Bounded comparisons of (candidate, reference) pairs: counts those outside their bound
// (or not bitwise equal when `exact`), keeps the worst few by error/bound.
class Tally {
 public:
  void add(const std::string& tensor, std::vector<int64_t> index, double cand, double ref, double bound,
           bool exact = false) {
    add_at([&] { return std::pair{tensor, std::move(index)}; }, cand, ref, bound, exact);
  }
  // add() for comparisons counted by the million (the Jacobian's entries): where() gives
  // the point's (tensor, index), built only for a failure.
  template <class Where>
  void add_at(const Where& where, double cand, double ref, double bound, bool exact = false) {
    if (counted(cand, ref, bound, exact)) return;
    auto [tensor, index] = where();
    worst_.push_back({std::move(tensor), std::move(index), cand, ref, bound});
    if (worst_.size() > 64) trim();
  }
  // Adds another tally's comparisons to this one.
  void merge(const Tally& o) {
    count_ += o.count_;
    failures_ += o.failures_;
    max_ratio_ = std::max(max_ratio_, o.max_ratio_);
    max_abs_ = std::max(max_abs_, o.max_abs_);
    worst_.insert(worst_.end(), o.worst_.begin(), o.worst_.end());
    if (worst_.size() > 64) trim();
  }
  int64_t count() const { return count_; }
  int64_t failures() const { return failures_; }
  double max_ratio() const { return max_ratio_; }

  // Folds the tally into r: the largest ratio and error, the worst points, FAILED on
  // any failure. The message is the caller's.
  void into(CheckResult& r) {
    trim();
    r.max_error_ratio = std::max(r.max_error_ratio, max_ratio_);
    r.max_abs_error = std::max(r.max_abs_error, max_abs_);
    r.worst.insert(r.worst.end(), worst_.begin(), worst_.end());
    if (failures_ > 0) r.disposition = Disposition::kFailed;
  }

 private:
  // Counts one comparison (bound becomes 0 when exact); true where it passed.
  bool counted(double cand, double ref, double& bound, bool exact) {
    ++count_;
    if (exact) bound = 0.0;  // anything but equality is infinitely far off
    const bool finite = std::isfinite(cand) && std::isfinite(ref);
    const double err = finite ? std::abs(cand - ref) : INFINITY;
    const bool ok =
        finite ? (exact ? cand == ref : err <= bound) : (cand == ref || (std::isnan(cand) && std::isnan(ref)));
    const bool agree = err == 0.0 || (ok && !finite);  // equal, or the same special value
    max_ratio_ = std::max(max_ratio_, agree ? 0.0 : bound > 0.0 ? err / bound : INFINITY);
    if (std::isfinite(err)) max_abs_ = std::max(max_abs_, err);
    failures_ += !ok;
    return ok;
  }
  static double ratio(const WorstPoint& p) {
    const double e = std::abs(p.candidate - p.reference);
    return std::isnan(e) || p.bound <= 0.0 ? INFINITY : e / p.bound;
  }
  void trim() {
    std::stable_sort(worst_.begin(), worst_.end(),
                     [](const WorstPoint& a, const WorstPoint& b) { return ratio(a) > ratio(b); });
    if (worst_.size() > 5) worst_.resize(5);
  }

  int64_t count_ = 0, failures_ = 0;
  double max_ratio_ = 0.0, max_abs_ = 0.0;
  std::vector<WorstPoint> worst_;
};

// Why a check built on differences of finite values cannot run on these inputs, or empty.
inline std::string nonfinite_inputs(const CheckContext& ctx) {
  if (ctx.c.data.fill == Fill::kSpecial) {
    return "fill: special puts NaN and infinities in x, where sums and differences are undefined";
  }
  if (ctx.c.data.fill == Fill::kBoundary) {  // even where this seed drew no NaN, a difference at max overflows
    return "fill: boundary puts NaN, infinities and the dtype's largest values in the inputs, where sums and "
           "differences are undefined or overflow";
  }
  const std::pair<const char*, const Tensor*> inputs[] = {
      {"x", &ctx.in.x}, {"w", &ctx.in.w}, {"b", &ctx.in.b}, {"dy", &ctx.in.dy}};
  for (const auto& [name, t] : inputs) {
    for (double v : t->data) {
      if (!std::isfinite(v)) return std::string("input ") + name + " holds NaN or infinite values";
    }
  }
  return {};
}

// Which of the oracle's outputs overflow: f64 itself (an output that is not finite from
// finite inputs, on any backend), or the case dtype on a candidate (a correct kernel
// stores inf there). A sum or difference with inf says nothing; empty when none does.
// Called once the inputs are known to be finite (nonfinite_inputs).
inline std::string overflowing(const CheckContext& ctx,
                               std::initializer_list<std::pair<const char*, const Tensor*>> outputs) {
  for (const auto& [name, t] : outputs) {
    for (double v : t->data) {
      if (!std::isfinite(v)) {
        return std::string("the oracle's ") + name + " is not finite although every input is (a sum overflows f64)";
      }
      if (!ctx.is_reference && std::isinf(round_to(ctx.c.dtype, v))) {
        return std::string("the oracle's ") + name + " overflows " + std::string(dtype_name(ctx.c.dtype)) +
               " (a correct kernel stores inf there)";
      }
    }
  }
  return {};
}

// Why a linear identity or a finite difference cannot be judged on this case: inputs
// that are not finite, or outputs that overflow the case dtype (see overflowing).
inline std::string nonfinite_values(const CheckContext& ctx) {
  if (std::string why = nonfinite_inputs(ctx); !why.empty()) return why;
  return overflowing(ctx, {{"y", &ctx.ref.y}, {"dx", &ctx.ref.dx}, {"dw", &ctx.ref.dw}, {"db", &ctx.ref.db}});
}

// Runs f(k) for k in [0, count) on up to task_threads() threads (independent probes, each
// an oracle forward or more); rethrows the first exception here, where the runner
// turns it into CRASHED. f must be safe to run concurrently.
inline void parallel_for(int count, const std::function<void(int)>& f) {
  const int threads = std::max(1, std::min<int>(count, task_threads()));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      try {
        for (int k = w; k < count; k += threads) f(k);
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace kc::checks
