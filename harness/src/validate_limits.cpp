// The resource limits of validate(): the environment's caps, the host memory a case
// needs (estimate_case_bytes) and the work of one forward. Every estimate saturates or
// runs in double, so that no size within the field rules can overflow it.
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
#include "validate_limits.h"

namespace kc {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

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
    for (const DimGeometry& d : s.dims) n *= static_cast<double>(std::max<int64_t>(d.out, 0)) * static_cast<double>(d.kernel);
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

std::string count_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

}  // namespace

Status check_work(const Case& c, const Limits& limits) {
  const double work = op_work(c);
  if (work <= limits.max_op_work) return ok_status();
  const bool pool = std::holds_alternative<MaxPoolParams>(c.op);
  return resource_exhausted("input: one forward of the case takes about " + count_text(work) +
                            (pool ? " comparisons" : " multiply-adds") + ", over the cap of " +
                            count_text(limits.max_op_work) +
                            ": the checks would run for hours on the reference (sizes too large; set " + kOpWorkVariable +
                            " to raise it)");
}

// A stack runs its layers' forwards one after the other, and the checks run that forward
// and the backward as often as they run a single op's: the cap of one forward applies to
// the sum over the layers, not to each layer (1000 layers under the cap each could take
// a day). Layers past one that erodes to nothing are not unrolled; it counts 0.
Status check_stack_work(const Case& c, const std::vector<StackLayer>& layers, const Limits& limits) {
  double work = 0.0, largest = 0.0;
  size_t largest_at = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const double w = op_work(layers[i].conv_case) + (layers[i].pool_case ? op_work(*layers[i].pool_case) : 0.0);
    work += w;
    if (w > largest) largest = w, largest_at = i;
  }
  if (work <= limits.max_op_work) return ok_status();
  const bool pool = has_max_pool(layers);
  const int64_t depth = std::get<StackParams>(c.op).depth;
  return resource_exhausted("stack.depth: one forward through the stack's " + std::to_string(depth) +
                            (depth == 1 ? " layer" : " layers") + " takes about " + count_text(work) + (pool ? " multiply-adds and comparisons" : " multiply-adds") +
                            " (the largest layer, " + std::to_string(largest_at + 1) + ", takes " + count_text(largest) +
                            "), over the cap of " + count_text(limits.max_op_work) +
                            " for the whole stack: the checks would run for hours on the reference (depth or sizes too large; set " +
                            kOpWorkVariable + " to raise it)");
}

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

Status check_memory(const Case& c, const Limits& limits) {
  const int64_t bytes = estimate_case_bytes(c);
  if (bytes <= limits.max_case_bytes) return ok_status();
  if (const auto* p = std::get_if<StackParams>(&c.op)) {
    return resource_exhausted("input: the stack needs about " + num(bytes >> 20) + " MiB of host memory over its " +
                              num(p->depth) + " layers, over the cap of " + num(limits.max_case_bytes >> 20) +
                              " MiB (sizes too large; set KC_MAX_CASE_BYTES to raise it)");
  }
  return resource_exhausted("input: the case needs about " + num(bytes >> 20) + " MiB of host memory, over the cap of " +
                            num(limits.max_case_bytes >> 20) + " MiB (sizes too large; set KC_MAX_CASE_BYTES to raise it)");
}

}  // namespace kc
