// The stack module's generator (gen.h, "Valid cases"): depth (shrinking to 1), the
// layer's conv window (strided in about 30 of 100 stacks: repeated over depth they shrink
// the input geometrically), groups, bias, relu, an optional training-mode max pool, the
// checkpoint policy, the dtype and the fill (random or normal: a stack fills its own
// inputs, see stack_exec.h). Never inline data (a stack takes none). No layer's output is
// empty, and the output depends on the input (no zero padding cuts it off), so a stack
// without relu always has a gradient; with relu the last output keeps at least 8
// elements a sample where the depth allows (relu still zeroes every gradient of about 1
// in 7 relu stacks, which the checks report MISTRUSTED).
#include <algorithm>

#include "core/format.h"
#include "gen/case_draft.h"
#include "gen/invalid.h"
#include "gen/op_fields.h"
#include "gen/pick.h"
#include "gen/sweep_quantities.h"
#include "gen/window_draft.h"
#include "ops/op_module.h"

namespace kc::gen {
namespace detail {
namespace {

using rc::gen::inRange;
using rc::gen::just;
using rc::gen::set;

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

Case realise_stack_case(const StackDraft& d) {
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
}  // namespace detail

rc::Gen<Case> op_case(const Options& options, const StackParams&) {
  const bool steer = options.steer;
  return rc::gen::map(detail::stack_draft(options.caps), [steer](const detail::StackDraft& d) {
    return steer ? detail::steered(detail::realise_stack_case(d)) : detail::realise_stack_case(d);
  });
}

namespace detail {
WindowRef window_ref(StackParams& p) { return window_ref(p.conv); }  // its layer conv's
ConvParams* conv_params(StackParams& p) { return &p.conv; }
}  // namespace detail

namespace detail {
std::vector<Rule> op_rules(const Case&, const StackParams& p) { return joined(stack_rules(p), conv_rules()); }
std::string_view bool_field(const StackParams&) { return "relu"; }
}  // namespace detail

namespace detail {
// A stack's own quantity: its depth (executors keep per-layer arrays of activations,
// saved inputs and plans); its layers are conv cases, swept as such.
std::vector<Quantity> sweep_quantities(const StackParams&) {
  return {{{"depth (layers)", small_counts()}, [](Case& c, int64_t n) { std::get<StackParams>(c.op).depth = n; }}};
}
// 1 -> 1 channel linear layers (a relu can kill a lone channel); every stack check.
void make_minimal(Case& c, StackParams& p) {
  p.conv.out_channels = 1;
  c.checks.clear();
}
}  // namespace detail

}  // namespace kc::gen
