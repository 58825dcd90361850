// Validation of a Case: field rules first (so that no arithmetic below can overflow),
// then the geometry rules of DESIGN section 3, then the memory cap.
#include "kc/validate.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "kc/shape.h"
#include "kc/stack.h"

namespace kc {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string num(int64_t v) { return std::to_string(v); }

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
Status check_dims(const std::string& field, const Dims& d, size_t rank, bool required,
                  int64_t min, const Limits& limits) {
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

Status check_padding_fields(const std::string& field, const PadSpec& pad, size_t rank,
                            const Limits& limits) {
  if (pad.kind != PadKind::kExplicit) return ok_status();
  if (!pad.pairs.empty() && pad.pairs.size() != rank) {
    return invalid_argument(field + ": has " + num(static_cast<int64_t>(pad.pairs.size())) +
                            " entries but input.spatial has rank " + num(static_cast<int64_t>(rank)));
  }
  for (size_t i = 0; i < pad.pairs.size(); ++i) {
    for (int s = 0; s < 2; ++s) {
      KC_RETURN_IF_ERROR(check_size(field + "[" + num(static_cast<int64_t>(i)) + "][" + num(s) + "]",
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

Status check_conv_fields(const std::string& f, const ConvParams& p, const InputSpec& in,
                         const Limits& limits) {
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
    return invalid_argument(f + ".groups: " + num(p.groups) + " does not divide " + f + ".out_channels " + num(p.out_channels));
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

// Every output extent >= 1, for conv and pool alike.
Status check_nonempty(const std::string& f, const SpatialGeometry& g) {
  for (size_t i = 0; i < g.dims.size(); ++i) {
    const DimGeometry& d = g.dims[i];
    if (d.out < 1) {
      return invalid_argument(f + ": empty output in spatial dim " + num(static_cast<int64_t>(i)) +
                              ": input " + num(d.in) + " + padding " + num(d.pad_lo) + "+" + num(d.pad_hi) +
                              " is smaller than the dilated kernel extent " + num(d.extent()));
    }
  }
  return ok_status();
}

Status check_conv_geometry(const std::string& f, const ConvGeometry& g) {
  KC_RETURN_IF_ERROR(check_nonempty(f, g.spatial));
  for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
    const DimGeometry& d = g.spatial.dims[i];
    const std::string where = f + ".padding: dim " + num(static_cast<int64_t>(i)) + " pads " +
                              num(d.pad_lo) + "/" + num(d.pad_hi) + " on input extent " + num(d.in);
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
                              ", more than half the window extent " + num(d.extent()) +
                              " (at most " + num(d.extent() / 2) + ")");
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

Status check_tensor_shapes(const Case& c, const std::map<std::string, Dims>& want,
                           const char* section) {
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
                          num(longest_sum) + " terms in this case make the bound allow any error (n * u >= 1); "
                          "give an explicit tolerance: {rtol, atol}, or a wider accumulation");
}

int64_t longest_conv_sum(const ConvGeometry& g) {
  const int64_t taps = g.spatial.kernel_count();
  return std::max({g.in_per_group() * taps + 1, g.out_per_group() * taps, g.batch * g.spatial.out_count()});
}

// A stack: its own fields, the memory cap over all layers, then every layer as the
// single-op case it runs as, so that the layer that erodes to nothing is named.
// The stack's own fields: depth, no inline tensors, the layer's conv and pool fields.
Status check_stack_fields(const Case& c, const StackParams& p, const Limits& limits) {
  if (p.depth < 1 || p.depth > kMaxStackDepth) {
    return invalid_argument("stack.depth: " + num(p.depth) + " is outside 1 to " + num(kMaxStackDepth));
  }
  if (!c.tensors.empty() || !c.expected.empty()) {
    return invalid_argument(std::string(c.tensors.empty() ? "expected" : "tensors") +
                            ": inline tensors are not supported for op stack (every layer has its own weights)");
  }
  KC_RETURN_IF_ERROR(check_conv_fields("stack.layer.conv", p.conv, c.input, limits));
  if (p.pool) KC_RETURN_IF_ERROR(check_pool_fields(*p.pool, c.input, limits));
  return ok_status();
}

// One layer as the single-op cases it runs as (accumulation included). Memory is the
// stack's cap over all layers (validate_stack): a layer is not a single-op case with the
// checks' copies of its own.
Status check_layer(const StackLayer& layer, const Limits& limits) {
  Limits per_layer = limits;
  per_layer.max_case_bytes = kMax;
  KC_RETURN_IF_ERROR(validate(layer.conv_case, per_layer));
  return layer.pool_case ? validate(*layer.pool_case, per_layer) : ok_status();
}

Status validate_stack(const Case& c, const StackParams& p, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_stack_fields(c, p, limits));
  const std::vector<StackLayer> layers = unchecked_stack_layers(c);
  for (size_t i = 0; i < layers.size(); ++i) KC_RETURN_IF_ERROR(at_stack_layer(i, check_layer(layers[i], limits)));
  const int64_t bytes = estimate_case_bytes(c);
  if (bytes > limits.max_case_bytes) {
    return resource_exhausted("input: the stack needs about " + num(bytes >> 20) + " MiB of host memory over its " +
                              num(p.depth) + " layers, over the cap of " + num(limits.max_case_bytes >> 20) +
                              " MiB (sizes too large; set KC_MAX_CASE_BYTES to raise it)");
  }
  return ok_status();
}

}  // namespace

std::vector<StackLayer> stack_layers_up_to_refused(const Case& c, const Limits& limits) {
  const auto* p = std::get_if<StackParams>(&c.op);
  if (p == nullptr || !check_stack_fields(c, *p, limits).ok()) return {};
  std::vector<StackLayer> layers = unchecked_stack_layers(c);
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!check_layer(layers[i], limits).ok()) {
      layers.resize(i + 1);
      return layers;
    }
  }
  return {};
}

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

int64_t saturating_add(int64_t a, int64_t b) { return b > 0 && a > kMax - b ? kMax : a + b; }

namespace {

constexpr const char* kCaseBytesVariable = "KC_MAX_CASE_BYTES";

// KC_MAX_CASE_BYTES: a positive byte count with an optional K, M or G (binary) suffix
// that fits int64 ("8G", "512M", "1000000"); nullopt for anything else, which is
// refused rather than misread (e.g. "8GB" must not become 8 bytes).
std::optional<int64_t> parse_case_bytes(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  const int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (ec != std::errc() || end == text.data() || v <= 0 || shift < 0 || v > (kMax >> shift)) return std::nullopt;
  return v << shift;
}

}  // namespace

constexpr const char* kOpWorkVariable = "KC_MAX_OP_WORK";

Limits default_limits() {
  Limits l;
  if (const char* env = std::getenv(kCaseBytesVariable)) {
    if (const auto bytes = parse_case_bytes(env)) l.max_case_bytes = *bytes;
  }
  if (const char* env = std::getenv(kOpWorkVariable)) {  // a count, written as the byte counts are
    if (const auto work = parse_case_bytes(env)) l.max_op_work = static_cast<double>(*work);
  }
  return l;
}

Status limits_environment_problem() {
  for (const char* name : {kCaseBytesVariable, kOpWorkVariable}) {
    const char* env = std::getenv(name);
    if (env == nullptr || *env == '\0' || parse_case_bytes(env)) continue;  // empty: unset
    return invalid_argument(std::string(name) + ": expected a positive " +
                            (name == kCaseBytesVariable ? "byte count" : "count") +
                            " with an optional K, M or G suffix (e.g. 8G), got '" + env + "'");
  }
  return ok_status();
}

namespace {

// The tensors of one op: inputs, outputs and gradients as f64 for the reference and one
// candidate, plus the reference's padded input and im2col workspace.
int64_t op_tensor_bytes(const Case& c) {
  auto spatial_product = [](const Dims& d) {
    int64_t n = 1;
    for (int64_t v : d) n = saturating_mul(n, v);
    return n;
  };
  const int64_t planes_in = saturating_mul(c.input.batch, c.input.channels);
  const int64_t x = saturating_mul(planes_in, spatial_product(c.input.spatial));
  int64_t elems = 0;
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    const PoolGeometry g = unchecked_pool_geometry(c);
    const int64_t y = saturating_mul(planes_in, spatial_product(g.spatial.out_dims()));
    elems = saturating_add(saturating_mul(x, 4), saturating_mul(y, 6));  // x, dx; y, dy, indices
  } else {
    const ConvGeometry g = unchecked_conv_geometry(c);
    int64_t padded = 1;
    for (const DimGeometry& d : g.spatial.dims) padded = saturating_mul(padded, d.padded());
    const int64_t xp = saturating_mul(planes_in, padded);
    const int64_t k = spatial_product(g.spatial.kernel_dims());
    const int64_t out = spatial_product(g.spatial.out_dims());
    const int64_t w = saturating_mul(saturating_mul(g.out_channels, g.in_per_group()), k);
    const int64_t y = saturating_mul(saturating_mul(g.batch, g.out_channels), out);
    const int64_t col = saturating_mul(saturating_mul(g.in_per_group(), k), out);
    // Reference and candidate: x, dx, w, dw, y, dy; reference only: xp, dxp, im2col.
    elems = saturating_mul(saturating_add(saturating_add(x, w), y), 4);
    elems = saturating_add(elems, saturating_add(saturating_mul(xp, 2), col));
  }
  return saturating_mul(elems, 8);
}

// The checks hold more than one set at a time (the absolute-value pass, the inputs'
// pristine copies, finite-difference probes on two threads, a derived padded case):
// peak resident memory of `kcheck run --in-process` on 2x16x256x256 with every check was
// 3.7 times the tensors for conv and conv_bias_relu and 8.5 times for max pool (its
// probes keep int64 argmaxes), on the reference and on a candidate alike.
constexpr int64_t kConvCheckCopies = 5, kPoolCheckCopies = 10;

// Multiply-adds (conv) or comparisons (max pool) of one forward, in double: no overflow
// (three extents of 2^31 each would overflow int64 products such as element_count).
double op_work(const Case& c) {
  auto windows = [](const SpatialGeometry& s) {  // outputs times taps, per plane
    double n = 1.0;
    for (const DimGeometry& d : s.dims) n *= static_cast<double>(d.out) * static_cast<double>(d.kernel);
    return n;
  };
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    const PoolGeometry g = unchecked_pool_geometry(c);
    return static_cast<double>(c.input.batch) * static_cast<double>(c.input.channels) * windows(g.spatial);
  }
  const ConvGeometry g = unchecked_conv_geometry(c);
  return static_cast<double>(g.batch) * static_cast<double>(g.out_channels) * static_cast<double>(g.in_per_group()) *
         windows(g.spatial);
}

Status check_work(const Case& c, const Limits& limits) {
  const double work = op_work(c);
  if (work <= limits.max_op_work) return ok_status();
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", work);
  const bool pool = std::holds_alternative<MaxPoolParams>(c.op);
  char cap[32];
  std::snprintf(cap, sizeof cap, "%.3g", limits.max_op_work);
  return resource_exhausted(std::string("input: one forward of the case takes about ") + text +
                            (pool ? " comparisons" : " multiply-adds") + ", over the cap of " + cap +
                            ": the checks would run for hours on the reference (sizes too large; set " +
                            kOpWorkVariable + " to raise it)");
}

}  // namespace

int64_t estimate_case_bytes(const Case& c) {
  if (is_stack(c)) {
    // Every layer's tensors (all activations may be held at once), plus twice the
    // largest layer's: the runs the checks hold side by side (oracle, candidate, a lowered
    // copy) each keep one layer's work at a time. Measured peak resident memory: 2.6 times
    // the layers' tensors at depth 1 (4x512x512), 0.6 times at depth 8.
    int64_t bytes = 0, largest = 0;
    for (const StackLayer& l : unchecked_stack_layers(c)) {
      int64_t layer = op_tensor_bytes(l.conv_case);
      if (l.pool_case) layer = saturating_add(layer, op_tensor_bytes(*l.pool_case));
      bytes = saturating_add(bytes, layer);
      largest = std::max(largest, layer);
    }
    return saturating_add(bytes, saturating_mul(largest, 2));
  }
  const bool pool = std::holds_alternative<MaxPoolParams>(c.op);
  return saturating_mul(op_tensor_bytes(c), pool ? kPoolCheckCopies : kConvCheckCopies);
}

Status validate(const Case& c, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_input(c.input, limits));
  if (const auto* st = std::get_if<StackParams>(&c.op)) return validate_stack(c, *st, limits);
  const bool pool = std::holds_alternative<MaxPoolParams>(c.op);
  const std::string f = std::holds_alternative<ConvParams>(c.op) ? "conv" : "conv_bias_relu";
  if (pool) {
    KC_RETURN_IF_ERROR(check_pool_fields(std::get<MaxPoolParams>(c.op), c.input, limits));
  } else {
    const ConvParams& p = std::holds_alternative<ConvParams>(c.op) ? std::get<ConvParams>(c.op)
                                                                   : std::get<ConvBiasReluParams>(c.op).conv;
    KC_RETURN_IF_ERROR(check_conv_fields(f, p, c.input, limits));
  }
  // Field rules hold: every size is within max_size, so the geometry arithmetic is safe
  // (the estimate below saturates rather than overflowing).
  const int64_t bytes = estimate_case_bytes(c);
  if (bytes > limits.max_case_bytes) {
    return resource_exhausted("input: the case needs about " + num(bytes >> 20) + " MiB of host memory, over the cap of " +
                              num(limits.max_case_bytes >> 20) + " MiB (sizes too large; set KC_MAX_CASE_BYTES to raise it)");
  }
  KC_RETURN_IF_ERROR(check_work(c, limits));
  if (pool) {
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
    return check_expected_indices(c, g);
  }
  const ConvGeometry g = unchecked_conv_geometry(c);
  KC_RETURN_IF_ERROR(check_conv_geometry(f, g));
  KC_RETURN_IF_ERROR(check_accumulation(c, longest_conv_sum(g)));
  if (!g.bias && (c.tensors.count("b") || c.expected.count("db"))) {
    return invalid_argument(std::string(c.tensors.count("b") ? "tensors.b" : "expected.db") +
                            ": the case has no bias (" + f + ".bias: false)");
  }
  KC_RETURN_IF_ERROR(check_tensor_shapes(
      c, {{"x", g.x_shape()}, {"w", g.w_shape()}, {"b", g.b_shape()}, {"dy", g.y_shape()}}, "tensors"));
  return check_tensor_shapes(c, {{"y", g.y_shape()}, {"dx", g.x_shape()}, {"dw", g.w_shape()}, {"db", g.b_shape()}},
                             "expected");
}

}  // namespace kc
