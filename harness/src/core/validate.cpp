// Validation of a Case: the input's fields, then the op's rules from its module
// (ops/<op>.cpp: field rules first, so that no arithmetic below can overflow, then the
// memory and work caps of validate_limits.cpp, then the geometry rules of docs/ops.md),
// and the rules the ops share (validate_rules.h).
#include "core/validate.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/check_table.h"
#include "core/format.h"
#include "core/validate_rules.h"
#include "kc/shape.h"
#include "ops/op_module.h"

namespace kc {

Status check_size(const std::string& field, int64_t v, int64_t min, const Limits& limits) {
  if (v < min) {
    return invalid_argument(field + ": " + num(v) + (min == 0 ? " is negative" : " must be at least " + num(min)));
  }
  if (v > limits.max_size) {
    return resource_exhausted(field + ": " + num(v) + " exceeds the size limit " + num(limits.max_size));
  }
  return ok_status();
}

// A per-dim list (kernel, stride, dilation): right length, every entry >= min.
Status check_dims(const std::string& field, const Dims& d, size_t rank, bool required, int64_t min,
                  const Limits& limits) {
  if (d.empty() && !required) return ok_status();
  if (d.size() != rank) {
    return invalid_argument(field + ": has " + num(static_cast<int64_t>(d.size())) +
                            " entries but input.spatial has rank " + num(static_cast<int64_t>(rank)));
  }
  for (size_t i = 0; i < d.size(); ++i) {
    KC_RETURN_IF_ERROR(check_size(field + "[" + num(static_cast<int64_t>(i)) + "]", d[i], min, limits));
  }
  return ok_status();
}

Status check_padding_fields(const std::string& field, const PadSpec& pad, size_t rank, const Limits& limits) {
  if (pad.kind != PadKind::kExplicit) return ok_status();
  if (!pad.pairs.empty() && pad.pairs.size() != rank) {
    return invalid_argument(field + ": has " + num(static_cast<int64_t>(pad.pairs.size())) +
                            " entries but input.spatial has rank " + num(static_cast<int64_t>(rank)));
  }
  for (size_t i = 0; i < pad.pairs.size(); ++i) {
    for (int s = 0; s < 2; ++s) {
      KC_RETURN_IF_ERROR(check_size(field + "[" + num(static_cast<int64_t>(i)) + "][" + num(int64_t{s}) + "]",
                                    pad.pairs[i][static_cast<size_t>(s)], 0, limits));
    }
  }
  return ok_status();
}

namespace {

Status check_input(const InputSpec& in, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_size("input.batch", in.batch, 1, limits));
  KC_RETURN_IF_ERROR(check_size("input.channels", in.channels, 1, limits));
  if (in.spatial.empty() || in.spatial.size() > 3) {
    return invalid_argument("input.spatial: rank " + num(static_cast<int64_t>(in.spatial.size())) +
                            " is outside 1 to 3 (give [W], [H, W] or [D, H, W])");
  }
  for (size_t i = 0; i < in.spatial.size(); ++i) {
    KC_RETURN_IF_ERROR(check_size("input.spatial[" + num(static_cast<int64_t>(i)) + "]", in.spatial[i], 1, limits));
  }
  return ok_status();
}

}  // namespace

// Every output extent >= 1, for conv and pool alike.
Status check_nonempty(const std::string& f, const SpatialGeometry& g) {
  for (size_t i = 0; i < g.dims.size(); ++i) {
    const DimGeometry& d = g.dims[i];
    if (d.out < 1) {
      return invalid_argument(f + ": empty output in spatial dim " + num(static_cast<int64_t>(i)) + ": input " +
                              num(d.in) + " + padding " + num(d.pad_lo) + "+" + num(d.pad_hi) +
                              " is smaller than the dilated kernel extent " + num(d.extent()));
    }
  }
  return ok_status();
}

Status check_tensor_shapes(const Case& c, const std::map<std::string, Dims>& want, const char* section) {
  for (const auto& [name, t] : section == std::string("tensors") ? c.tensors : c.expected) {
    auto it = want.find(name);
    if (it == want.end()) {
      return invalid_argument(std::string(section) + "." + name + ": unknown tensor for op " +
                              std::string(op_name(c.op)));
    }
    if (t.shape != it->second) {
      return invalid_argument(std::string(section) + "." + name + ": shape " + dims_to_string(t.shape) +
                              " does not match the case, which needs " + dims_to_string(it->second));
    }
  }
  return ok_status();
}

// With `accumulation:` a 16-bit accumulator and the bound tolerance, the longest sum of
// the case (n terms: a y, a dx, or dw/db over batch and positions) must keep n * u < 1,
// where the worst-case bound stops allowing any error at all.
Status check_accumulation(const Case& c, int64_t longest_sum) {
  if (!c.accumulation || c.tolerance.kind != ToleranceKind::kBound) return ok_status();
  const double u = unit_roundoff(*c.accumulation);
  if (static_cast<double>(longest_sum) * u < 1.0) return ok_status();
  return invalid_argument("accumulation: " + std::string(dtype_name(*c.accumulation)) + " sums of up to " +
                          num(longest_sum) +
                          " terms in this case make the bound allow any error (n * u >= 1); "
                          "give an explicit tolerance: {rtol, atol}, or a wider accumulation");
}

// `tolerance: exact` demands bitwise equality with the f64 oracle, which a correct kernel
// meets only where every value it computes is exact whatever the order of its sums
// (docs/cases.md, "tolerance: exact"). Where that holds: `fill: integer` (values chosen so that every sum
// is exact); every input given inline (the author's own values: hand-worked goldens,
// shrunk regressions); a max pool whose dx sums the dy of at most one window per input
// element, or of two in f64, or none in inference mode (y and indices are selections,
// never rounded; a sum of two rounds the same either way round, but in a narrower dtype
// the oracle's f64 sum is not the value a kernel stores). Elsewhere a correct kernel
// fails on its rounding alone.
//
// Most windows whose taps can share one input element along a dim, capped at 3 (only
// one, two or more matter): windows o and o + j share a tap position when j * stride is
// a multiple of the dilation (j a multiple of m = lcm(stride, dilation) / stride) within
// the dilated extent. Padding is not looked at: where taps meet only over padding the
// count is an upper bound, exact for windows inside the input.
int64_t windows_sharing(const DimGeometry& d) {
  const int64_t m = d.dilation / std::gcd(d.stride, d.dilation);
  const int64_t lcm = m * d.stride;  // <= 2^62, as is the extent below
  return std::min({(d.kernel - 1) * d.dilation / lcm + 1, (d.out - 1) / m + 1, int64_t{3}});
}

int64_t windows_sharing(const SpatialGeometry& g) {
  int64_t sharing = 1;
  for (const DimGeometry& d : g.dims) sharing = std::min<int64_t>(sharing * windows_sharing(d), 3);
  return sharing;
}

Status check_exact_tolerance(const Case& c, std::vector<std::string> inputs, const PoolGeometry* pool) {
  if (c.tolerance.kind != ToleranceKind::kExact) return ok_status();
  if (c.data.fill == Fill::kInteger) return ok_status();
  // A max pool's y and indices are selections, exact in any fill: only its dx sums.
  if (pool != nullptr && !judges_backward(c)) return ok_status();
  if (judges_backward(c)) inputs.push_back("dy");  // else the backward's dy is never compared
  std::string missing;
  for (const std::string& name : inputs) {
    if (!c.tensors.count(name)) missing += (missing.empty() ? "" : ", ") + name;
  }
  if (missing.empty()) return ok_status();
  const std::string fill = "fill: " + std::string(fill_name(c.data.fill));
  if (pool != nullptr) {
    if (pool->mode == PoolMode::kInference) return ok_status();
    const int64_t sharing = windows_sharing(pool->spatial);
    if (sharing == 1 || (sharing == 2 && c.dtype == DType::kF64)) return ok_status();
    const std::string why = sharing == 2 ? "two dy values, which a correct " + std::string(dtype_name(c.dtype)) +
                                               " kernel rounds to its dtype where the oracle keeps the f64 sum"
                                         : "three or more dy values, whose rounding depends on the order a correct "
                                           "kernel adds them in";
    return invalid_argument("tolerance: exact with " + fill +
                            " on this max pool: its windows' taps overlap, and dx sums " + why +
                            "; exact needs fill: integer, every input inline under tensors: (missing: " + missing +
                            "), or windows that share no input element" + (sharing == 2 ? " (or two, in f64)" : "") +
                            "; use bound otherwise");
  }
  return invalid_argument(
      "tolerance: exact with " + fill + " fails a correct kernel on the rounding of its sums; " +
      "exact needs fill: integer (values whose every sum is exact)" +
      (is_stack(c) ? std::string() : " or every input inline under tensors: (missing: " + missing + ")") +
      "; use bound otherwise");
}

// Each op's module (ops/<op>/) has its validate_op overload: a new op without one
// fails to compile here.
Status validate(const Case& c, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_input(c.input, limits));
  return std::visit([&](const auto& p) { return validate_op(c, p, limits); }, c.op);
}

}  // namespace kc
