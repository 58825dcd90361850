// Property-based generation (docs/cli.md, "fuzz and gen"), namespace kc::gen:
//  - RapidCheck generators of valid cases of every op (ranks 1 to 3, every parameter
//    of docs/ops.md; op: stack too), valid by construction and sized so that the
//    reference stays fast. Each field is its own generator, so RapidCheck shrinks every
//    field on its own: sizes toward small, stride and dilation toward 1, padding toward
//    none, the dtype toward f64, fills toward `random`, inline data toward ordinary values.
//  - Generators of invalid cases, each breaking exactly one rule, with the substring
//    the refusal must contain.
//  - Generators of input data with the values kernels get wrong (NaN, infinities,
//    signed zeros, subnormals, ties and near-ties), for inline `tensors: x`.
//  - Driving a generator outside a property (kcheck gen / fuzz) and shrinking a
//    generated case against any "does it still fail" predicate.
// Every generated value is a pure function of (seed, index): runs are reproducible and
// can be split between processes.
// More on the method: docs/notes.md, section harness/src/gen/gen.h.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <rapidcheck/Gen.h>
#include <rapidcheck/Random.h>
#include <rapidcheck/Shrinkable.h>

#include "kc/case.h"
#include "kc/tensor.h"
#include "ops/op_module.h"

namespace kc::gen {

// The ops a generator draws: one op, named by its default params, or the mix (kAllOps):
// conv, max pool and conv_bias_relu, as it was before op: stack existed, so that a seed
// keeps generating the cases it did (saved reproduce commands, the mix's properties, the
// time the planted-bug fuzz tests take), and single-op bugs are found by the checks that
// see one op. Stacks and average pools are drawn only when asked for.
struct OpSet {
  std::optional<OpParams> only;  // nullopt: the mix
  bool operator==(const OpSet&) const = default;
};
inline const OpSet kAllOps{};
template <class P>
OpSet only() {
  return OpSet{OpParams(P{})};
}

// An op's name (kc/case.h) or "all"; op_set_name is its inverse.
std::optional<OpSet> parse_op_set(std::string_view name);
std::string_view op_set_name(const OpSet& ops);
// "conv, maxpool, ..., stack or all", for --op's help and errors.
std::string op_set_names();

// Kinds of input values, as a bit mask.
enum DataKind : unsigned {
  kOrdinary = 1u << 0,    // uniform in [-1, 1], rounded to the dtype
  kSignedZero = 1u << 1,  // +0 and -0
  kSubnormal = 1u << 2,   // subnormals of the dtype, either sign
  kTie = 1u << 3,         // values from a small set, so windows hold equal maxima
  kNearTie = 1u << 4,     // a tie value moved by 1 to 3 ulps of the dtype
  kInfinity = 1u << 5,    // +inf and -inf
  kNaN = 1u << 6,
};
inline constexpr unsigned kFiniteData = kOrdinary | kSignedZero | kSubnormal | kTie | kNearTie;
inline constexpr unsigned kAllData = kFiniteData | kInfinity | kNaN;

// Size caps. Extents are the input before the repair that makes every window fit
// (which adds at most the dilated kernel extent). The defaults keep a full check of a
// generated case on the reference at a few milliseconds on average.
struct Caps {
  std::array<int64_t, 3> extent = {40, 16, 8};  // per spatial rank 1, 2, 3
  std::array<int64_t, 3> kernel = {9, 5, 3};    // rank 1 past 8 taps (a kernel loop unrolled for 8)
  std::array<int64_t, 3> dilation = {3, 3, 2};
  int64_t stride = 3, pad = 3;
  int64_t batch = 5, groups = 4, channels_per_group = 4;  // batch past 4 (a loop unrolled by 4)
  // A few cases are wide: channels past a warp (32) and extents past common tile
  // sizes, where GPU kernels change code paths. They cost the reference about 100
  // times a usual case, hence the small share; shrinking narrows them first.
  int64_t wide_percent = 10;
  int64_t wide_channels_per_group = 40;  // with at most 2 groups and a batch of 2
  int64_t wide_extent_factor = 2;        // ranks 1 and 2
  // A few convs are aligned: channels multiples of channel_multiple (8, the 128-bit
  // vector of a 16-bit dtype, which tensor-core kernels such as the CUTLASS engine's
  // need: other counts stay on direct kernels and fuzzing would never reach them), 8 to
  // 32, one group, never depthwise, a batch of 2. Taken from the usual share. The
  // percentages of a draw's size modes are clamped to [0, 100] and the usual share to 0.
  int64_t aligned_percent = 8;
  int64_t channel_multiple = 1;  // 8 in an aligned case
  int64_t depthwise_percent = 20;
  // A few cases are threshold cases: one or two sizes drawn from {2^k - 1, 2^k, 2^k + 1}
  // where kernels switch paths (batch 7 to 33, channels 31 to 257, an output extent of
  // 7 to 129, a max pool window past 256 taps), the others small, cut until the case
  // costs the reference at most threshold_cost units (threshold.h: about a microsecond
  // each). Taken from the usual cases' share, so that wide cases stay as they were.
  int64_t threshold_percent = 8;
  int64_t threshold_cost = 100000;
  // A share of conv, conv_bias_relu and max pool cases zero a region of their filled
  // data (`data: zero:`): a sample, a plane or a channel of x, or a plane or a tile of dy.
  int64_t zero_percent = 10;
  // op: stack. At most stack_depth layers, fewer where the layer's window would erode
  // every input within stack_extent to nothing (a strided or valid layer shrinks the
  // extent at each layer) or grow some layer's output past twice stack_extent; the
  // input extent is what the depth needs plus up to stack_extent - 1. The layer's
  // window uses kernel, dilation, stride and pad above; at most 2 groups of
  // stack_channels_per_group channels in and out, a batch of 2. The defaults keep a
  // full check of a stack case on the reference at about a millisecond on average
  // (tens at most).
  int64_t stack_depth = 8;
  std::array<int64_t, 3> stack_extent = {32, 12, 8};  // per spatial rank 1, 2, 3
  int64_t stack_channels_per_group = 3;
};

struct Options {
  Caps caps;
  // Kinds of values in inline x data; inline data is generated only when this is not
  // 0. Without kNaN/kInfinity `fill: special` is not generated either, so that every
  // case has finite inputs (gradcheck, adjoint and weight_share apply).
  unsigned data = kAllData;
  // Steer each case's data seed here (steer_seed). false: the cases come with their
  // drawn seeds, and the caller steers them where a crash of the oracle cannot end
  // it (kcheck fuzz: in the worker that checks the case). Either way a (seed, index)
  // gives the same case once steered.
  bool steer = true;
};

// Valid cases (validate() accepts every one). conv_bias_relu always has a bias.
// Steered away from cases whose oracle results cannot judge a kernel (MISTRUSTED): a
// conv window with zeros padding sees the input in every dim; the data seed is the
// first of a few whose oracle y, dx, dw, db are not all zero, constant or mostly zero
// (and, for conv, whose <conv(x, w), dy> does not cancel to 0); a zero region is kept
// whatever weight_share's partial sums make of it (the region is the point of its
// case). `fill: special` reaches every op and dtype (conv_bias_relu's relu(-inf) = 0 is
// judged as exactly 0). Integer and ties fills stay at every size, though past the elements
// gradcheck differences one by one its random directions cross their exact relu zeros
// and ties (gradcheck MISTRUSTED there, while forward, backward and weight_share still
// judge exact sums and relu'(0)). What the geometry alone makes sparse (a stride that
// skips inputs, a pool with few outputs) is kept.
// One op's generator is its module's op_case (ops/op_module.h, ops/<op>/<op>_gen.cpp, each
// saying what it draws); op_case_of<AvgPoolParams>(options) names it by its params.
template <class P>
rc::Gen<Case> op_case_of(const Options& options = {}) {
  return op_case(options, P{});
}
rc::Gen<Case> valid_case(const OpSet& ops, const Options& options = {});

// The steering of the generators above: the case with the first of its data seed s,
// s + 1, ..., s + 5 whose oracle results can judge a kernel, or with s where none can
// (or where the oracle throws). It runs the oracle (forward and backward, a stack's
// whole step): `trying`, when given, is told each seed before the oracle runs on it,
// so that a caller can name the data a crash happened on.
Case steer_seed(Case c, const std::function<void(uint64_t seed)>& trying = {});

// One value of the dtype of one of `kinds` (which must not be 0).
rc::Gen<double> data_value(DType dtype, unsigned kinds);
// A tensor of `shape` and `dtype`: first a palette (a non-empty subset of `kinds`),
// then each element from the palette, so that whole tensors of ties or of -inf occur.
rc::Gen<Tensor> data_tensor(DType dtype, const Dims& shape, unsigned kinds);
// The case (valid) with inline `tensors: x` from data_tensor.
rc::Gen<Case> with_inline_x(const Case& c, unsigned kinds);

// A case that breaks exactly one rule. `yaml` is the case file (usually case_to_yaml
// of `c`; for rules that only the reader enforces, a mutated text) and carries
// `expect: {error: ...}`; validate(c) refuses a case whose rule is a Case rule
// (reader_only == false).
struct InvalidCase {
  std::string rule;   // e.g. "groups_divide_channels"
  std::string error;  // a substring of the error message
  bool reader_only = false;
  Case c;
  std::string yaml;
};
// only<StackParams>() breaks a stack's rules (depth out of range, a layer that erodes to nothing,
// inline tensors, a bad checkpoint policy, ...) and the field rules it shares.
rc::Gen<InvalidCase> invalid_case(const OpSet& ops);

// The RapidCheck size the case `index` of a run with `seed` is generated at: spread
// over [40, 100] so that a run mixes small and large cases.
int generation_size(uint64_t seed, uint64_t index);
// The random source of value `index` of the run with `seed`.
rc::Random random_for(uint64_t seed, uint64_t index);
// Value `index` of the run with `seed`, with its shrink tree. Deterministic.
template <class T>
rc::Shrinkable<T> generate(const rc::Gen<T>& gen, uint64_t seed, uint64_t index) {
  return gen(random_for(seed, index), generation_size(seed, index));
}

struct ShrinkOutcome {
  Case smallest;
  int steps = 0;             // shrinks kept
  int tried = 0;             // candidates run
  bool out_of_time = false;  // stopped by the deadline, not at a local minimum
};

// Walks the shrink tree from `root` (whose value fails): takes the first shrink that
// still fails, and repeats from there until none does or the deadline passes.
// `still_fails` runs a candidate; it is never called after the deadline.
ShrinkOutcome shrink_case(const rc::Shrinkable<Case>& root, const std::function<bool(const Case&)>& still_fails,
                          std::chrono::steady_clock::time_point deadline);

}  // namespace kc::gen
