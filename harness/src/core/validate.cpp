// Validation of a Case: field rules first (so that no arithmetic below can overflow),
// then the memory and work caps (validate_limits.cpp), then the geometry rules of
// docs/ops.md. A stack is validated by its op's file (ops/stack_validate.cpp).
#include "core/validate.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/check_table.h"
#include "core/format.h"
#include "core/ops/stack.h"
#include "core/validate_limits.h"
#include "core/validate_rules.h"
#include "core/zero_region.h"
#include "kc/overloaded.h"
#include "kc/shape.h"

namespace kc {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

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

Status check_conv_fields(const std::string& f, const ConvParams& p, const InputSpec& in, const Limits& limits) {
  const size_t rank = in.spatial.size();
  KC_RETURN_IF_ERROR(check_size(f + ".out_channels", p.out_channels, 1, limits));
  KC_RETURN_IF_ERROR(check_dims(f + ".kernel", p.kernel, rank, true, 1, limits));
  KC_RETURN_IF_ERROR(check_dims(f + ".stride", p.stride, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_dims(f + ".dilation", p.dilation, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_size(f + ".groups", p.groups, 1, limits));
  if (in.channels % p.groups != 0) {
    return invalid_argument(f + ".groups: " + num(p.groups) + " does not divide input.channels " + num(in.channels));
  }
  if (p.out_channels % p.groups != 0) {
    return invalid_argument(f + ".groups: " + num(p.groups) + " does not divide " + f + ".out_channels " +
                            num(p.out_channels));
  }
  return check_padding_fields(f + ".padding", p.padding, rank, limits);
}

Status check_pool_fields(const MaxPoolParams& p, const InputSpec& in, const Limits& limits) {
  const size_t rank = in.spatial.size();
  KC_RETURN_IF_ERROR(check_dims("maxpool.kernel", p.kernel, rank, true, 1, limits));
  KC_RETURN_IF_ERROR(check_dims("maxpool.stride", p.stride, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_dims("maxpool.dilation", p.dilation, rank, false, 1, limits));
  return check_padding_fields("maxpool.padding", p.padding, rank, limits);
}

namespace {

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

Status check_conv_geometry(const std::string& f, const ConvGeometry& g) {
  KC_RETURN_IF_ERROR(check_nonempty(f, g.spatial));
  for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
    const DimGeometry& d = g.spatial.dims[i];
    const std::string where = f + ".padding: dim " + num(static_cast<int64_t>(i)) + " pads " + num(d.pad_lo) + "/" +
                              num(d.pad_hi) + " on input extent " + num(d.in);
    if (g.mode == PaddingMode::kReflect && (d.pad_lo >= d.in || d.pad_hi >= d.in)) {
      return invalid_argument(where + ": reflect padding must be smaller than the input extent");
    }
    if (g.mode == PaddingMode::kCircular && (d.pad_lo > d.in || d.pad_hi > d.in)) {
      return invalid_argument(where + ": circular padding must not exceed the input extent");
    }
  }
  return ok_status();
}

Status check_pool_geometry(const PoolGeometry& g) {
  KC_RETURN_IF_ERROR(check_nonempty("maxpool", g.spatial));
  for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
    const DimGeometry& d = g.spatial.dims[i];
    const std::string dim = "dim " + num(static_cast<int64_t>(i));
    if (d.pad_lo > d.extent() / 2 || d.pad_hi > d.extent() / 2) {
      return invalid_argument("maxpool.padding: " + dim + " pads " + num(d.pad_lo) + "/" + num(d.pad_hi) +
                              ", more than half the window extent " + num(d.extent()) + " (at most " +
                              num(d.extent() / 2) + ")");
    }
    // With dilation a window can straddle the input without touching it; its max and
    // index would be undefined, so such a case is refused. The first tap at or after
    // input element 0 is found arithmetically: scanning the taps would make validation
    // quadratic in the window size (minutes for a large 1-D window).
    for (int64_t o = 0; o < d.out; ++o) {
      const int64_t start = o * d.stride - d.pad_lo;
      const int64_t k0 = start >= 0 ? 0 : (-start + d.dilation - 1) / d.dilation;
      const bool touches = k0 < d.kernel && start + k0 * d.dilation < d.in;
      if (!touches) {
        return invalid_argument("maxpool: " + dim + ": window " + num(o) +
                                " covers no input element (only padding); reduce padding or dilation");
      }
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

// Expected max-pool indices are flat positions in one input plane: one past its last
// position cannot come from any kernel, so the case is wrong, not the kernel.
Status check_expected_indices(const Case& c, const PoolGeometry& g) {
  auto it = c.expected.find("indices");
  if (it == c.expected.end()) return ok_status();
  const int64_t plane = element_count(g.spatial.in_dims());
  for (int64_t i = 0; i < it->second.size(); ++i) {
    if (it->second[i] < static_cast<double>(plane)) continue;
    return invalid_argument("expected.indices: " + num(static_cast<int64_t>(it->second[i])) + " (element " + num(i) +
                            ") is outside the input plane, whose positions are 0 to " + num(plane - 1) +
                            " (indices are flat positions in one plane)");
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

int64_t longest_conv_sum(const ConvGeometry& g) {
  const int64_t taps = g.spatial.kernel_count();
  return std::max({g.in_per_group() * taps + 1, g.out_per_group() * taps, g.batch * g.spatial.out_count()});
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

// Whether every window of an average pool divides by a power of two (then y = sum /
// divisor is exact wherever the sum is). Per dim the window's divisor factor is its
// clipped extent; the divisor is their product, a power of two exactly when each is.
bool avg_divisors_exact(const AvgPoolGeometry& g) {
  auto power_of_two = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (g.divisor > 0) return power_of_two(g.divisor);
  for (const DimGeometry& d : g.spatial.dims) {
    for (int64_t o = 0; o < d.out; ++o) {
      const int64_t start = o * d.stride - d.pad_lo, end = start + d.kernel;
      const int64_t counted = g.count_include_pad ? std::min(end, d.in + d.pad_hi) - start
                                                  : std::min(end, d.in) - std::max<int64_t>(start, 0);
      if (!power_of_two(counted)) return false;
    }
  }
  return true;
}

}  // namespace

Status check_exact_tolerance(const Case& c, std::vector<std::string> inputs, const PoolGeometry* pool,
                             const AvgPoolGeometry* avg) {
  if (c.tolerance.kind != ToleranceKind::kExact) return ok_status();
  // An average pool's dx adds dy / divisor over the windows holding an element: in any
  // fill, once two windows share it, the order of those rounded quotients shows.
  if (avg != nullptr && judges_backward(c)) {
    int64_t sharing = 1;
    for (const DimGeometry& d : avg->spatial.dims) sharing = std::min<int64_t>(sharing * windows_sharing(d), 3);
    if (sharing > 1) {
      return invalid_argument(
          "tolerance: exact on this avgpool: its windows overlap, and dx adds the rounded dy / divisor of "
          "several windows in an order a correct kernel chooses; use bound, or a stride no smaller than the "
          "kernel");
    }
  }
  if (avg != nullptr && !avg_divisors_exact(*avg)) {
    return invalid_argument(
        "tolerance: exact on this avgpool: some window's divisor is not a power of two, so a correct kernel "
        "rounds y = sum / divisor to its dtype where the oracle keeps the f64 quotient; use bound, or a divisor "
        "that is a power of two");
  }
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
    int64_t sharing = 1;
    for (const DimGeometry& d : pool->spatial.dims) sharing = std::min<int64_t>(sharing * windows_sharing(d), 3);
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

namespace {

Status validate_maxpool(const Case& c, const MaxPoolParams& p, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_pool_fields(p, c.input, limits));
  // Field rules hold: every size is within max_size, so the geometry arithmetic is safe
  // (the estimate below saturates rather than overflowing).
  KC_RETURN_IF_ERROR(check_memory(c, limits));
  KC_RETURN_IF_ERROR(check_work(c, limits));
  const PoolGeometry g = unchecked_pool_geometry(c);
  KC_RETURN_IF_ERROR(check_pool_geometry(g));
  if (g.mode == PoolMode::kInference) {  // no indices, hence no backward, to compare with
    for (const char* name : {"indices", "dx"}) {
      if (c.expected.count(name)) {
        return invalid_argument(std::string("expected.") + name +
                                ": maxpool.mode inference keeps no indices and has no backward");
      }
    }
  }
  KC_RETURN_IF_ERROR(check_accumulation(c, g.spatial.kernel_count()));
  KC_RETURN_IF_ERROR(check_tensor_shapes(c, {{"x", g.x_shape()}, {"dy", g.y_shape()}}, "tensors"));
  KC_RETURN_IF_ERROR(
      check_tensor_shapes(c, {{"y", g.y_shape()}, {"indices", g.y_shape()}, {"dx", g.x_shape()}}, "expected"));
  KC_RETURN_IF_ERROR(check_expected_indices(c, g));
  KC_RETURN_IF_ERROR(check_zero_regions(c.data.zero, {g.x_shape(), {}, g.y_shape()}, "maxpool"));
  return check_exact_tolerance(c, {"x"}, &g);
}

Status validate_avgpool(const Case& c, const AvgPoolParams& p, const Limits& limits) {
  const size_t rank = c.input.spatial.size();
  KC_RETURN_IF_ERROR(check_dims("avgpool.kernel", p.kernel, rank, true, 1, limits));
  KC_RETURN_IF_ERROR(check_dims("avgpool.stride", p.stride, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_padding_fields("avgpool.padding", p.padding, rank, limits));
  if (p.divisor) KC_RETURN_IF_ERROR(check_size("avgpool.divisor", *p.divisor, 1, limits));
  KC_RETURN_IF_ERROR(check_memory(c, limits));
  KC_RETURN_IF_ERROR(check_work(c, limits));
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
  KC_RETURN_IF_ERROR(check_nonempty("avgpool", g.spatial));
  if (!g.count_include_pad) {  // the divisor would be the window's 0 input elements
    for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
      const DimGeometry& d = g.spatial.dims[i];
      for (int64_t o = 0; o < d.out; ++o) {
        const int64_t start = o * d.stride - d.pad_lo;
        if (start + d.kernel > 0 && start < d.in) continue;
        return invalid_argument("avgpool: dim " + num(static_cast<int64_t>(i)) + ": window " + num(o) +
                                " covers no input element (only padding), and count_include_pad: false would "
                                "divide by 0; reduce the padding or count the padding");
      }
    }
  }
  KC_RETURN_IF_ERROR(check_accumulation(c, g.spatial.kernel_count()));
  KC_RETURN_IF_ERROR(check_tensor_shapes(c, {{"x", g.x_shape()}, {"dy", g.y_shape()}}, "tensors"));
  KC_RETURN_IF_ERROR(check_tensor_shapes(c, {{"y", g.y_shape()}, {"dx", g.x_shape()}}, "expected"));
  KC_RETURN_IF_ERROR(check_zero_regions(c.data.zero, {g.x_shape(), {}, g.y_shape()}, "avgpool"));
  return check_exact_tolerance(c, {"x"}, nullptr, &g);
}

Status validate_conv(const Case& c, const ConvParams& p, const Limits& limits) {
  const std::string f(op_name(c.op));
  KC_RETURN_IF_ERROR(check_conv_fields(f, p, c.input, limits));
  KC_RETURN_IF_ERROR(check_memory(c, limits));
  KC_RETURN_IF_ERROR(check_work(c, limits));
  const ConvGeometry g = unchecked_conv_geometry(c);
  KC_RETURN_IF_ERROR(check_conv_geometry(f, g));
  KC_RETURN_IF_ERROR(check_accumulation(c, longest_conv_sum(g)));
  if (!g.bias && (c.tensors.count("b") || c.expected.count("db"))) {
    return invalid_argument(std::string(c.tensors.count("b") ? "tensors.b" : "expected.db") +
                            ": the case has no bias (" + f + ".bias: false)");
  }
  KC_RETURN_IF_ERROR(check_tensor_shapes(
      c, {{"x", g.x_shape()}, {"w", g.w_shape()}, {"b", g.b_shape()}, {"dy", g.y_shape()}}, "tensors"));
  KC_RETURN_IF_ERROR(check_tensor_shapes(
      c, {{"y", g.y_shape()}, {"dx", g.x_shape()}, {"dw", g.w_shape()}, {"db", g.b_shape()}}, "expected"));
  KC_RETURN_IF_ERROR(check_zero_regions(c.data.zero, {g.x_shape(), g.w_shape(), g.y_shape()}, op_name(c.op)));
  return check_exact_tolerance(c, g.bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
                               nullptr);
}

}  // namespace

Status validate(const Case& c, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_input(c.input, limits));
  return std::visit(Overloaded{[&](const StackParams& p) { return validate_stack(c, p, limits); },
                               [&](const MaxPoolParams& p) { return validate_maxpool(c, p, limits); },
                               [&](const AvgPoolParams& p) { return validate_avgpool(c, p, limits); },
                               [&](const ConvParams& p) { return validate_conv(c, p, limits); },
                               [&](const ConvBiasReluParams& p) { return validate_conv(c, p.conv, limits); }},
                    c.op);
}

}  // namespace kc
