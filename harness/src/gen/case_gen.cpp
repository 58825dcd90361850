// Generators of valid cases: a draft drawn field by field (gen::build, one generator
// per field, so RapidCheck shrinks each on its own), realised as a Case. Field order
// is shrink order: the window (sizes) first, then batch and channels, then the dtype
// and the data; a stack's depth comes before its window. Options list the simplest
// choice first (pick.h), which is where a shrink lands: f64, fill random, no inline
// data, zeros padding mode, no pool, checkpoint none.
#include <algorithm>
#include <string_view>
#include <variant>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "core/fill.h"
#include "core/validate.h"
#include "gen/gen.h"
#include "gen/window_draft.h"
#include "kc/backend.h"
#include "kc/overloaded.h"
#include "kc/ref/conv.h"
#include "pick.h"
#include "stack/stack.h"
#include "stack/stack_exec.h"
#include "threshold.h"
#include "zero_draft.h"

namespace kc::gen {
namespace {

using detail::flag;
using detail::pick;
using rc::gen::inRange;
using rc::gen::just;
using rc::gen::set;

struct DataDraft {
  Fill fill = Fill::kRandom;
  uint64_t seed = 0;
  bool exact = false;          // tolerance: exact (only with fill: integer, where sums are exact)
  bool inline_x = false;       // inline x from data_tensor (not with fill: integer)
  detail::ZeroDraft zero;      // drawn after them: the fields above draw as they did before it
  bool deterministic = false;  // deterministic: true (drawn last, likewise)
};

struct ConvDraft {
  detail::WindowDraft window;
  int64_t batch = 1, groups = 1, in_per_group = 1, out_per_group = 1;
  bool depthwise = false, bias = false;
  DType dtype = DType::kF64;
  DataDraft data;
};

struct PoolDraft {
  detail::WindowDraft window;
  int64_t batch = 1, channels = 1;
  PoolMode mode = PoolMode::kTraining;
  TieRule tie = TieRule::kFirst;
  DType dtype = DType::kF64;
  DataDraft data;
};

// Average pooling: a pool window without dilation; the divisor given on a few cases.
struct AvgPoolDraft {
  detail::WindowDraft window;
  int64_t batch = 1, channels = 1;
  bool count_include_pad = true;
  bool divisor = false;
  int64_t divisor_value = 1;
  DType dtype = DType::kF64;
  DataDraft data;
};

// op: stack. The depth is drawn up to caps.stack_depth and lowered by realise_stack()
// (window_draft.h) where no input within the caps fits it. Without `strided` the window's
// strides are all 1: a strided layer repeated over depth shrinks the input
// geometrically, so that strided stacks are shallow ones.
struct StackDraft {
  int64_t depth = 1;
  detail::WindowDraft window;
  bool strided = false;
  detail::StackPoolDraft pool;
  int64_t batch = 1, groups = 1, in_per_group = 1, out_per_group = 1;
  bool bias = false, relu = false;
  CheckpointPolicy checkpoint;
  DType dtype = DType::kF64;
  Fill fill = Fill::kRandom;
  uint64_t seed = 0;
};

Caps widened(Caps c) {
  c.channels_per_group = c.wide_channels_per_group;
  c.groups = std::min<int64_t>(c.groups, 2);
  c.batch = std::min<int64_t>(c.batch, 2);
  c.extent[0] *= c.wide_extent_factor;
  c.extent[1] *= c.wide_extent_factor;
  return c;
}

enum class SizeMode { kUsual, kThreshold, kWide };

// The options with the usual caps, the wide ones (wide_percent of the time) or the small
// ones of a threshold case (threshold_percent, taken from the usual share: a draw that
// was wide still is, with the same case).
struct Sized {
  Options o;
  bool threshold = false;
};

rc::Gen<Sized> sized(const Options& o) {
  const uint64_t wide = static_cast<uint64_t>(o.caps.wide_percent);
  const uint64_t threshold = static_cast<uint64_t>(o.caps.threshold_percent);
  const auto mode = pick<SizeMode>(
      {{100 - wide - threshold, SizeMode::kUsual}, {threshold, SizeMode::kThreshold}, {wide, SizeMode::kWide}});
  return rc::gen::map(mode, [o](SizeMode m) {
    Sized r{o, m == SizeMode::kThreshold};
    if (m == SizeMode::kWide) r.o.caps = widened(o.caps);
    if (m == SizeMode::kThreshold) r.o.caps = detail::threshold_caps(o.caps);
    return r;
  });
}

rc::Gen<DType> dtype_gen() {
  return pick<DType>({{1, DType::kF64}, {1, DType::kF32}, {1, DType::kF16}, {1, DType::kBF16}});
}

// `fill: special` (NaN, infinities, signed zeros, subnormals) and `fill: boundary` (each
// dtype's largest, smallest and tie-making values, docs/cases.md) for every op and dtype:
// conv_bias_relu's relu(-inf) = 0 is judged as exactly 0 (judge/tolerance.h).
rc::Gen<DataDraft> data_draft(bool pool, const Options& o) {
  std::vector<std::pair<uint64_t, Fill>> fills = {
      {4, Fill::kRandom}, {2, Fill::kNormal}, {3, Fill::kInteger}, {pool ? 3u : 1u, Fill::kTies}};
  if (o.data & (kNaN | kInfinity)) fills.push_back({1, Fill::kSpecial}), fills.push_back({1, Fill::kBoundary});
  return rc::gen::build<DataDraft>(
      set(&DataDraft::fill, pick<Fill>(fills)), set(&DataDraft::seed, rc::gen::arbitrary<uint64_t>()),
      set(&DataDraft::exact, flag(50)), set(&DataDraft::inline_x, o.data != 0 ? flag(pool ? 30 : 12) : just(false)),
      set(&DataDraft::zero, detail::zero_draft(static_cast<uint64_t>(o.caps.zero_percent))),
      set(&DataDraft::deterministic, flag(20)));
}

void apply_data(const DataDraft& d, Case& c) {
  c.data = DataSpec{d.seed, d.fill, {}};
  c.deterministic = d.deterministic;  // every output bitwise repeatable: determinism and state demand it
  if (d.fill == Fill::kInteger && d.exact) c.tolerance.kind = ToleranceKind::kExact;
}

Case steered(Case c) { return steer_seed(std::move(c)); }

// The case (its sizes final), with inline x when the draft asks for it, its zero region
// (none on an inline x) and its data seed steered (steer).
rc::Gen<Case> finish(Case c, const DataDraft& d, unsigned kinds, bool steer) {
  auto complete = [zero = d.zero, steer](Case r) {
    r.data.zero = detail::realise_zero(zero, r);
    return steer ? steered(std::move(r)) : r;
  };
  if (!d.inline_x || d.fill == Fill::kInteger || kinds == 0) return just(complete(std::move(c)));
  return rc::gen::map(with_inline_x(c, kinds), complete);
}

rc::Gen<ConvDraft> conv_draft(bool fused, const Options& o) {
  const Caps& k = o.caps;
  return rc::gen::build<ConvDraft>(
      set(&ConvDraft::window, detail::window_draft(false, k)), set(&ConvDraft::batch, inRange<int64_t>(1, k.batch + 1)),
      set(&ConvDraft::groups, inRange<int64_t>(1, k.groups + 1)),
      set(&ConvDraft::in_per_group, inRange<int64_t>(1, k.channels_per_group + 1)),
      set(&ConvDraft::out_per_group, inRange<int64_t>(1, k.channels_per_group + 1)),
      set(&ConvDraft::depthwise, flag(20)), set(&ConvDraft::bias, fused ? just(true) : flag(50)),
      set(&ConvDraft::dtype, dtype_gen()), set(&ConvDraft::data, data_draft(false, o)));
}

Case realise_conv(const ConvDraft& d, bool fused) {
  const detail::Window w = detail::realise(d.window);
  Case c;
  c.dtype = d.dtype;
  c.input = InputSpec{d.batch, d.groups * (d.depthwise ? 1 : d.in_per_group), w.spatial};
  ConvParams p;
  p.out_channels = d.groups * d.out_per_group;
  p.kernel = w.kernel;
  p.stride = w.stride;
  p.dilation = w.dilation;
  p.groups = d.groups;
  p.padding = w.padding;
  p.padding_mode = d.window.mode;
  p.bias = fused || d.bias;
  if (fused) {
    c.op = ConvBiasReluParams{p};
  } else {
    c.op = p;
  }
  apply_data(d.data, c);
  return c;
}

// A draft realised as a case, through apply_threshold() for a threshold case (whose
// threshold draft is drawn after the draft, so that the draft draws as it would alone).
template <class Draft, class Realise>
rc::Gen<Case> realised(const Sized& s, const rc::Gen<Draft>& draft, Realise realise) {
  const Options o = s.o;
  if (!s.threshold) {
    return rc::gen::mapcat(draft, [o, realise](const Draft& d) { return finish(realise(d), d.data, o.data, o.steer); });
  }
  return rc::gen::mapcat(rc::gen::pair(draft, detail::threshold_draft()),
                         [o, realise](const std::pair<Draft, detail::ThresholdDraft>& p) {
                           const Case c = detail::apply_threshold(realise(p.first), p.second, o.caps);
                           return finish(c, p.first.data, o.data, o.steer);
                         });
}

rc::Gen<Case> conv_like(bool fused, const Options& options) {
  return rc::gen::mapcat(sized(options), [fused](const Sized& s) {
    return realised(s, conv_draft(fused, s.o), [fused](const ConvDraft& d) { return realise_conv(d, fused); });
  });
}

rc::Gen<PoolDraft> pool_draft(const Options& o) {
  const Caps& k = o.caps;
  return rc::gen::build<PoolDraft>(
      set(&PoolDraft::window, detail::window_draft(true, k)), set(&PoolDraft::batch, inRange<int64_t>(1, k.batch + 1)),
      set(&PoolDraft::channels, inRange<int64_t>(1, k.groups + 2)),
      set(&PoolDraft::mode, pick<PoolMode>({{3, PoolMode::kTraining}, {1, PoolMode::kInference}})),
      set(&PoolDraft::tie, pick<TieRule>({{2, TieRule::kFirst}, {1, TieRule::kLast}, {1, TieRule::kAny}})),
      set(&PoolDraft::dtype, dtype_gen()), set(&PoolDraft::data, data_draft(true, o)));
}

Case realise_pool(const PoolDraft& d) {
  const detail::Window w = detail::realise(d.window);
  Case c;
  c.dtype = d.dtype;
  c.input = InputSpec{d.batch, d.channels, w.spatial};
  MaxPoolParams p;
  p.kernel = w.kernel;
  p.stride = w.stride;
  p.dilation = w.dilation;
  p.padding = w.padding;
  p.ceil_mode = d.window.ceil_mode;
  p.mode = d.mode;
  p.tie = d.tie;
  c.op = p;
  apply_data(d.data, c);
  return c;
}

rc::Gen<AvgPoolDraft> avgpool_draft(const Options& o) {
  const Caps& k = o.caps;
  auto window = rc::gen::map(detail::window_draft(true, k), [](detail::WindowDraft w) {
    for (detail::DimDraft& d : w.dims) d.dilation = 1;  // average pooling has none
    return w;
  });
  return rc::gen::build<AvgPoolDraft>(
      set(&AvgPoolDraft::window, window), set(&AvgPoolDraft::batch, inRange<int64_t>(1, k.batch + 1)),
      set(&AvgPoolDraft::channels, inRange<int64_t>(1, k.groups + 2)), set(&AvgPoolDraft::count_include_pad, flag(50)),
      set(&AvgPoolDraft::divisor, flag(15)), set(&AvgPoolDraft::divisor_value, inRange<int64_t>(1, 30)),
      set(&AvgPoolDraft::dtype, dtype_gen()), set(&AvgPoolDraft::data, data_draft(false, o)));
}

Case realise_avgpool(const AvgPoolDraft& d) {
  const detail::Window w = detail::realise(d.window);
  Case c;
  c.dtype = d.dtype;
  c.input = InputSpec{d.batch, d.channels, w.spatial};
  AvgPoolParams p;
  p.kernel = w.kernel;
  p.stride = w.stride;
  p.padding = w.padding;
  p.ceil_mode = d.window.ceil_mode;
  p.count_include_pad = d.count_include_pad;
  if (d.divisor) p.divisor = d.divisor_value;
  c.op = p;
  apply_data(d.data, c);
  // Overlapping windows add rounded quotients in a kernel's own order: not exact.
  if (c.tolerance.kind == ToleranceKind::kExact && !validate(c).ok()) c.tolerance.kind = ToleranceKind::kBound;
  return c;
}

// The layer's conv window is drawn as a single conv's, within the stack's extents.
rc::Gen<StackDraft> stack_draft(const Caps& k) {
  Caps window_caps = k;
  window_caps.extent = k.stack_extent;
  const auto checkpoint = rc::gen::apply(
      [](CheckpointKind kind, int64_t every) {
        return CheckpointPolicy{kind, kind == CheckpointKind::kEvery ? every : 0};
      },
      pick<CheckpointKind>({{2, CheckpointKind::kNone}, {2, CheckpointKind::kEvery}, {1, CheckpointKind::kSqrt}}),
      detail::between(1, std::max<int64_t>(1, k.stack_depth)));
  return rc::gen::build<StackDraft>(
      set(&StackDraft::depth, detail::between(1, std::max<int64_t>(1, k.stack_depth))),
      set(&StackDraft::window, detail::window_draft(false, window_caps)), set(&StackDraft::strided, flag(30)),
      set(&StackDraft::pool, detail::stack_pool_draft()),
      set(&StackDraft::batch, inRange<int64_t>(1, std::min<int64_t>(k.batch, 2) + 1)),
      set(&StackDraft::groups, inRange<int64_t>(1, std::min<int64_t>(k.groups, 2) + 1)),
      set(&StackDraft::in_per_group, inRange<int64_t>(1, k.stack_channels_per_group + 1)),
      set(&StackDraft::out_per_group, inRange<int64_t>(1, k.stack_channels_per_group + 1)),
      set(&StackDraft::bias, flag(50)), set(&StackDraft::relu, flag(50)), set(&StackDraft::checkpoint, checkpoint),
      set(&StackDraft::dtype, dtype_gen()),
      set(&StackDraft::fill, pick<Fill>({{2, Fill::kRandom}, {1, Fill::kNormal}})),
      set(&StackDraft::seed, rc::gen::arbitrary<uint64_t>()));
}

// With relu, a stack whose last output has few elements often has every one of them
// negative for the data drawn, and then no gradient at all (MISTRUSTED): where the
// depth allows, its last output keeps at least 8 elements a sample.
int64_t least_out(const StackDraft& d) {
  if (!d.relu) return 1;
  int64_t f = 1;
  for (;; ++f) {
    int64_t elements = d.groups * d.out_per_group;
    for (size_t i = 0; i < d.window.keep.size(); ++i) elements *= f;
    if (elements >= 8) return f;
  }
}

Case realise_stack(const StackDraft& d) {
  detail::WindowDraft window = d.window;
  if (!d.strided) {
    for (detail::DimDraft& dim : window.dims) dim.stride = 1;
  }
  const detail::StackWindow w = detail::realise_stack(window, d.pool, d.depth, least_out(d));
  Case c;
  c.dtype = d.dtype;
  c.input = InputSpec{d.batch, d.groups * d.in_per_group, w.conv.spatial};
  StackParams p;
  p.depth = w.depth;
  p.conv.out_channels = d.groups * d.out_per_group;
  p.conv.kernel = w.conv.kernel;
  p.conv.stride = w.conv.stride;
  p.conv.dilation = w.conv.dilation;
  p.conv.groups = d.groups;
  p.conv.padding = w.conv.padding;
  p.conv.padding_mode = d.window.mode;
  p.conv.bias = d.bias;
  p.relu = d.relu;
  p.pool = w.pool;
  p.checkpoint = d.checkpoint;
  c.op = p;
  c.data = DataSpec{d.seed, d.fill, {}};
  return c;
}

}  // namespace

rc::Gen<Case> conv_case(const Options& options) { return conv_like(false, options); }
rc::Gen<Case> conv_bias_relu_case(const Options& options) { return conv_like(true, options); }

rc::Gen<Case> maxpool_case(const Options& options) {
  return rc::gen::mapcat(sized(options), [](const Sized& s) { return realised(s, pool_draft(s.o), realise_pool); });
}

// Threshold sizes (threshold.h) are drawn for conv and max pool only: an average pool
// draws within the caps of the mode it is given.
rc::Gen<Case> avgpool_case(const Options& options) {
  return rc::gen::mapcat(sized(options), [](Sized s) {
    s.threshold = false;
    return realised(s, avgpool_draft(s.o), realise_avgpool);
  });
}

rc::Gen<Case> stack_case(const Options& options) {
  const bool steer = options.steer;
  return rc::gen::map(stack_draft(options.caps),
                      [steer](const StackDraft& d) { return steer ? steered(realise_stack(d)) : realise_stack(d); });
}

rc::Gen<Case> valid_case(const OpSet& ops, const Options& options) {
  if (!ops.only) {  // the mix (see OpSet)
    return rc::gen::mapcat(
        pick<OpSet>({{2, only<ConvParams>()}, {1, only<MaxPoolParams>()}, {1, only<ConvBiasReluParams>()}}),
        [options](const OpSet& op) { return valid_case(op, options); });
  }
  return std::visit(Overloaded{[&](const ConvParams&) { return conv_case(options); },
                               [&](const MaxPoolParams&) { return maxpool_case(options); },
                               [&](const AvgPoolParams&) { return avgpool_case(options); },
                               [&](const ConvBiasReluParams&) { return conv_bias_relu_case(options); },
                               [&](const StackParams&) { return stack_case(options); }},
                    *ops.only);
}

std::optional<OpSet> parse_op_set(std::string_view name) {
  if (name == "all") return kAllOps;
  if (std::optional<OpParams> op = op_named(name)) return OpSet{*op};
  return std::nullopt;
}

std::string_view op_set_name(const OpSet& ops) { return ops.only ? op_name(*ops.only) : "all"; }

std::string op_set_names() { return op_name_list(", ") + " or all"; }

}  // namespace kc::gen
