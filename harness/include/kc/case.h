// Case: the one value type that describes a problem for every part of kernelcheck
// (YAML I/O, generators, backends, checks, reports, benchmarks).
// Ops are a closed set: OpParams is a std::variant dispatched with std::visit.
// A Case as loaded may be invalid; validate() (validate.h) says why before anything
// is allocated.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kc/dtype.h"
#include "kc/tensor.h"

namespace kc {

enum class PadKind { kExplicit, kSame, kSameLower, kValid };

// Padding as written in the case. Explicit padding holds one [lo, hi] pair per spatial
// dim (a number or a symmetric list is expanded to pairs when the case is read).
struct PadSpec {
  PadKind kind = PadKind::kExplicit;
  std::vector<std::array<int64_t, 2>> pairs;
  bool operator==(const PadSpec&) const = default;
};

enum class PaddingMode { kZeros, kReflect, kReplicate, kCircular };
enum class PoolMode { kInference, kTraining };
enum class TieRule { kFirst, kLast, kAny };

struct ConvParams {
  static constexpr std::string_view kName = "conv";     // `op:` in a case
  static constexpr std::string_view kSection = "conv";  // the YAML section of its params
  int64_t out_channels = 1;
  Dims kernel;    // per spatial dim
  Dims stride;    // per spatial dim; empty means all 1
  Dims dilation;  // per spatial dim; empty means all 1
  int64_t groups = 1;
  PadSpec padding;
  PaddingMode padding_mode = PaddingMode::kZeros;
  bool bias = false;
  bool operator==(const ConvParams&) const = default;
};

struct MaxPoolParams {
  static constexpr std::string_view kName = "maxpool";     // `op:` in a case
  static constexpr std::string_view kSection = "maxpool";  // the YAML section of its params
  Dims kernel;
  Dims stride;    // empty means equal to the kernel (the usual framework default)
  Dims dilation;  // empty means all 1
  PadSpec padding;
  bool ceil_mode = false;
  PoolMode mode = PoolMode::kTraining;
  TieRule tie = TieRule::kFirst;
  bool operator==(const MaxPoolParams&) const = default;
};

// Average pooling: no dilation. The divisor of a window is `divisor` when given (> 0),
// else its size clipped to the padded input (count_include_pad: true, PyTorch's rule:
// the ceil-mode overhang past the padding never counts), else the number of input
// elements it covers (docs/ops.md, "Average pooling").
struct AvgPoolParams {
  static constexpr std::string_view kName = "avgpool";     // `op:` in a case
  static constexpr std::string_view kSection = "avgpool";  // the YAML section of its params
  Dims kernel;
  Dims stride;  // empty means equal to the kernel
  PadSpec padding;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor;
  bool operator==(const AvgPoolParams&) const = default;
};

// conv + bias + relu as one op; the conv always has a bias.
struct ConvBiasReluParams {
  static constexpr std::string_view kName = "conv_bias_relu";  // `op:` in a case
  static constexpr std::string_view kSection = "conv";         // the YAML section of its params
  ConvParams conv;
  bool operator==(const ConvBiasReluParams&) const = default;
};

// How a stack's backward pass keeps activations: all of them (none), only every K-th
// layer input (every:K), or every ceil(sqrt(depth))-th (sqrt); the layers between two
// checkpoints are recomputed from the earlier one in the backward pass.
enum class CheckpointKind { kNone, kEvery, kSqrt };

struct CheckpointPolicy {
  CheckpointKind kind = CheckpointKind::kNone;
  int64_t every = 0;  // K, only for kEvery
  bool operator==(const CheckpointPolicy&) const = default;
};

// `depth` copies of one layer: conv [+ bias] [+ relu] [+ max pool]. The first layer
// maps input.channels to conv.out_channels, the others out_channels to out_channels;
// every layer has its own weights. The pool always runs in training mode.
struct StackParams {
  static constexpr std::string_view kName = "stack";     // `op:` in a case
  static constexpr std::string_view kSection = "stack";  // the YAML section of its params
  int64_t depth = 1;
  ConvParams conv;
  bool relu = false;
  std::optional<MaxPoolParams> pool;
  CheckpointPolicy checkpoint;
  bool operator==(const StackParams&) const = default;
};

// The closed set of ops, enumerated here once; each op's name is its params' kName,
// written once. Code that differs by op dispatches with std::visit and one overload per
// op (kc/overloaded.h), never with a default branch, so that a new op fails to compile
// wherever it must be handled.
using OpParams = std::variant<ConvParams, MaxPoolParams, AvgPoolParams, ConvBiasReluParams, StackParams>;

struct InputSpec {
  int64_t batch = 1;
  int64_t channels = 1;
  Dims spatial;  // rank 1 to 3: [W], [H, W] or [D, H, W]
  bool operator==(const InputSpec&) const = default;
};

enum class Fill { kRandom, kNormal, kInteger, kTies, kSpecial, kBoundary };

// A region of a filled input set to exactly 0 after the fill (`data: zero:`). Each of
// sample, channel and box left out means all of it. For x and dy, sample is the batch
// index and channel the tensor's channel; for w, sample is the output channel and
// channel the input channel within its group. box holds one half-open [lo, hi) per
// spatial dim of that tensor (x: the input, dy: the output, w: the kernel). Inline
// tensors win: a region never touches a tensor given under `tensors:`.
enum class ZeroTensor { kX, kW, kDy };

struct ZeroRegion {
  ZeroTensor tensor = ZeroTensor::kX;
  std::optional<int64_t> sample;
  std::optional<int64_t> channel;
  std::vector<std::array<int64_t, 2>> box;  // empty: the whole plane
  bool operator==(const ZeroRegion&) const = default;
};

struct DataSpec {
  uint64_t seed = 0;
  Fill fill = Fill::kRandom;
  std::vector<ZeroRegion> zero;  // applied in order, after the fill
  bool operator==(const DataSpec&) const = default;
};

enum class ToleranceKind { kBound, kExact, kExplicit };

struct Tolerance {
  ToleranceKind kind = ToleranceKind::kBound;
  double rtol = 0.0;  // only for kExplicit
  double atol = 0.0;  // only for kExplicit
  bool operator==(const Tolerance&) const = default;
};

// What the case expects of the harness: to run, or to be refused with an error
// whose message contains `error`.
struct Expectation {
  bool pass = true;
  std::string error;
  bool operator==(const Expectation&) const = default;
};

struct Case {
  std::string name;
  DType dtype = DType::kF32;
  InputSpec input;
  OpParams op = ConvParams{};
  DataSpec data;
  std::vector<std::string> checks;  // empty: every check that applies
  Tolerance tolerance;
  // The dtype the candidate's sums are accumulated in, for the tolerance model; empty:
  // the contract's default (f32 for f16/bf16, the storage dtype otherwise).
  std::optional<DType> accumulation;
  bool deterministic = false;
  std::map<std::string, Tensor> tensors;   // inline inputs: x, w, b, dy
  std::map<std::string, Tensor> expected;  // golden outputs: y, indices, dx, dw, db
  Expectation expect;
  std::string source;  // "file:line" it was read from, for messages; not compared

  bool operator==(const Case& o) const;
};

std::string_view op_name(const OpParams& op);             // its params' kName
std::string_view op_section(const OpParams& op);          // its params' kSection
std::vector<OpParams> all_ops();                          // each op's default params, in OpParams' order
std::optional<OpParams> op_named(std::string_view name);  // the op's default params; nullopt: no such op
std::string op_name_list(std::string_view last_sep);      // "conv, maxpool, ... or stack" (last_sep: " or ")
bool is_stack(const Case& c);
const PadSpec& padding_of(const OpParams& op);           // a stack's: its layer conv's
DType accumulation_of(const Case& c);                    // c.accumulation, or default_accumulation(c.dtype)
std::string checkpoint_name(const CheckpointPolicy& p);  // "none", "every:4", "sqrt"
int64_t spatial_rank(const Case& c);

std::string_view pad_kind_name(PadKind kind);
std::string_view padding_mode_name(PaddingMode mode);
std::string_view pool_mode_name(PoolMode mode);
std::string_view tie_rule_name(TieRule tie);
std::string_view fill_name(Fill fill);
std::string_view zero_tensor_name(ZeroTensor t);  // "x", "w", "dy"

}  // namespace kc
