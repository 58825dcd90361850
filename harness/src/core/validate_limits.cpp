// The resource limits of validate(): the environment's caps, the host memory a case
// needs (estimate_case_bytes) and the work of one forward. Every estimate saturates or
// runs in double, so that no size within the field rules can overflow it.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "core/format.h"
#include "core/memory_parts.h"
#include "core/validate_limits.h"
#include "kc/shape.h"
#include "ops/op_module.h"
#include "ops/stack/stack_layers.h"

namespace kc {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

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

namespace {

std::optional<Limits>& frozen_limits() {
  static std::optional<Limits> frozen;
  return frozen;
}

Limits limits_from_environment() {
  Limits l;
  if (const char* env = std::getenv(kCaseBytesVariable)) {
    if (const auto bytes = parse_case_bytes(env)) l.max_case_bytes = *bytes;
  }
  if (const char* env = std::getenv(kOpWorkVariable)) {  // a count, written as the byte counts are
    if (const auto work = parse_case_bytes(env)) l.max_op_work = static_cast<double>(*work);
  }
  return l;
}

}  // namespace

Limits default_limits() { return frozen_limits() ? *frozen_limits() : limits_from_environment(); }

void freeze_limits_environment() { frozen_limits() = limits_from_environment(); }

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

// The op's memory parts (see op_tensor_bytes). `f` is the op's field path in messages
// ("conv", "conv_bias_relu", "maxpool", "stack.layer.conv", ...). A stack has none of its
// own: its layers are single-op cases.
std::vector<MemoryPart> memory_parts(const Case& c, const std::string& f) {
  const Cause input{1.0, "input",
                    "input (batch " + num(c.input.batch) + ", channels " + num(c.input.channels) + ", spatial " +
                        dims_to_string(c.input.spatial) + ")"};
  return std::visit([&](const auto& p) { return memory_parts(c, p, f, input); }, c.op);
}

// The tensors of one op: inputs, outputs and gradients as f64 for the reference and one
// candidate, plus the reference's padded input and im2col workspace.
int64_t op_tensor_bytes(const Case& c) {
  int64_t bytes = 0;
  for (const MemoryPart& part : memory_parts(c, "")) bytes = saturating_add(bytes, part.bytes());
  return bytes;
}

// The checks hold more than one set at a time (the absolute-value pass, the inputs'
// pristine copies, finite-difference probes on two threads, a derived padded case):
// peak resident memory of `kcheck run --in-process` on 2x16x256x256 with every check was
// 3.7 times the tensors for conv and conv_bias_relu and 8.5 times for max pool (its
// probes keep int64 argmaxes), on the reference and on a candidate alike.
constexpr int64_t kConvCheckCopies = 5, kPoolCheckCopies = 10;

}  // namespace

double op_work(const Case& c) {
  return std::visit([&](const auto& p) { return op_work(c, p).count; }, c.op);
}

// What one unit of op_work is, in messages.
const char* work_unit(const Case& c) {
  return std::visit([&](const auto& p) { return op_work(c, p).unit; }, c.op);
}

std::string count_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

Status check_work(const Case& c, const Limits& limits) {
  const double work = op_work(c);
  if (work <= limits.max_op_work) return ok_status();
  return resource_exhausted("input: one forward of the case takes about " + count_text(work) + work_unit(c) +
                            ", over the cap of " + count_text(limits.max_op_work) +
                            ": the checks would run for hours on the reference (sizes too large; set " +
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
  // Only a max pool's probes keep int64 argmaxes.
  const bool argmax = op_traits(c).indices;
  return saturating_mul(op_tensor_bytes(c), argmax ? kPoolCheckCopies : kConvCheckCopies);
}

namespace {

std::string op_field(const Case& c) { return std::string(op_name(c.op)); }

const MemoryPart& largest_part(const std::vector<MemoryPart>& parts) {
  return *std::max_element(parts.begin(), parts.end(),
                           [](const MemoryPart& a, const MemoryPart& b) { return a.bytes() < b.bytes(); });
}

// The part's cause: its largest factor, where that factor is what puts `bytes` over the
// cap (without it the case would fit); else its base (a batch of a million is the
// input's doing, not the out_channels' that make y 21 times x).
const Cause& cause_of(const MemoryPart& part, int64_t bytes, int64_t cap) {
  const Cause* best = nullptr;
  for (const Cause& c : part.causes) {
    if (c.factor >= 2.0 && (best == nullptr || c.factor > best->factor)) best = &c;
  }
  if (best == nullptr || static_cast<double>(bytes) / best->factor > static_cast<double>(cap)) return part.base;
  return *best;
}

// "the largest part (99%) is the reference's im2col workspace (...) [64, 31, 31, 512,
// 512], made large by conv.kernel [31, 31]"; a part whose element count overflows says so.
std::string part_text(const MemoryPart& part, const Cause& cause, int64_t op_bytes) {
  const std::string what = part.what + " " + dims_to_string(part.shape);
  if (part.elements() == kMax) {
    return what + " alone has more elements than a 64-bit count holds, made large by " + cause.why;
  }
  const double share = op_bytes > 0 ? 100.0 * static_cast<double>(part.bytes()) / static_cast<double>(op_bytes) : 100.0;
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", share);
  return "the largest part (" + std::string(pct) + ") is " + what + ", made large by " + cause.why;
}

// A byte count in the largest binary unit it reaches, to three significant digits:
// "193 MiB", "608 GiB", "4 GiB".
std::string human_bytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) v /= 1024.0, ++unit;
  char buf[48];
  std::snprintf(buf, sizeof buf, v >= 100.0 ? "%.0f %s" : "%.3g %s", v, kUnits[unit]);  // never 1e+03
  return buf;
}

std::string bytes_text(int64_t bytes) {
  return bytes == kMax ? "more host memory than a 64-bit byte count holds (over 8 EiB)"
                       : "about " + human_bytes(bytes) + " of host memory";
}

// What a case needs, and the cap it is over, in words that never read equal: exact byte
// counts where rounding would make them the same ("2.98 GiB, over the cap of 2.98 GiB").
struct NeedAndCap {
  std::string need, cap;
};
NeedAndCap need_and_cap(int64_t bytes, int64_t cap) {
  if (bytes != kMax && human_bytes(bytes) == human_bytes(cap)) {
    return {num(bytes) + " bytes of host memory", num(cap) + " bytes"};
  }
  return {bytes_text(bytes), human_bytes(cap)};
}

constexpr const char* kRaiseCap = " (sizes too large; set KC_MAX_CASE_BYTES to raise it)";

// A stack: its largest layer's largest part; blamed on that part's field when the layer
// alone (with the checks' two extra runs of it) is over the cap, else on the depth.
Status stack_memory_refusal(const Case& c, int64_t bytes, const Limits& limits) {
  const std::vector<StackLayer> layers = unchecked_stack_layers(c);
  size_t at = 0;
  int64_t largest = -1;
  std::vector<MemoryPart> parts;
  for (size_t i = 0; i < layers.size(); ++i) {
    std::vector<MemoryPart> p = memory_parts(layers[i].conv_case, "stack.layer.conv");
    if (layers[i].pool_case) {
      for (MemoryPart& q : memory_parts(*layers[i].pool_case, "stack.layer.maxpool")) p.push_back(std::move(q));
    }
    int64_t layer = 0;
    for (const MemoryPart& q : p) layer = saturating_add(layer, q.bytes());
    if (layer > largest) largest = layer, at = i, parts = std::move(p);
  }
  const MemoryPart& top = largest_part(parts);
  const Cause& cause = cause_of(top, saturating_mul(largest, 3), limits.max_case_bytes);
  const int64_t depth = std::get<StackParams>(c.op).depth;
  const std::string field = saturating_mul(largest, 3) > limits.max_case_bytes ? cause.field : "stack.depth";
  const NeedAndCap nc = need_and_cap(bytes, limits.max_case_bytes);
  return resource_exhausted(field + ": the stack needs " + nc.need + " over its " + num(depth) +
                            (depth == 1 ? " layer" : " layers") + ", over the cap of " + nc.cap +
                            "; its largest layer, " + num(static_cast<int64_t>(at + 1)) + ", needs " +
                            bytes_text(largest) + ": " + part_text(top, cause, largest) + kRaiseCap);
}

}  // namespace

Status check_memory(const Case& c, const Limits& limits) {
  const int64_t bytes = estimate_case_bytes(c);
  if (bytes <= limits.max_case_bytes) return ok_status();
  if (is_stack(c)) return stack_memory_refusal(c, bytes, limits);
  const std::vector<MemoryPart> parts = memory_parts(c, op_field(c));
  const MemoryPart& top = largest_part(parts);
  const Cause& cause = cause_of(top, bytes, limits.max_case_bytes);
  const NeedAndCap nc = need_and_cap(bytes, limits.max_case_bytes);
  return resource_exhausted(cause.field + ": the case needs " + nc.need + ", over the cap of " + nc.cap + ": " +
                            part_text(top, cause, op_tensor_bytes(c)) + kRaiseCap);
}

}  // namespace kc
