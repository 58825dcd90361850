// Threshold cases (see threshold.h). A case drawn with small caps gets its large sizes,
// then, while it costs more than the budget, loses what is not large: the batch, every
// spatial dim but one, channels, a pool's overlapping windows, and the window of the
// remaining dims (to one tap on an input of one, or the target extent). Every step keeps
// the case valid; validate() has the last word, and a draft whose sizes do not fit
// falls back to one large size, then to the small case as drawn.
#include "gen/threshold.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/invariant.h"
#include "core/validate.h"
#include "gen/op_fields.h"
#include "kc/shape.h"
#include "pick.h"

namespace kc::gen::detail {
namespace {

enum class Axis { kBatch, kInPerGroup, kOutPerGroup, kDepthwise, kMultiplier, kExtent, kChannels, kWindow };

const std::vector<Axis> kConvAxes = {Axis::kBatch,     Axis::kInPerGroup, Axis::kOutPerGroup,
                                     Axis::kDepthwise, Axis::kMultiplier, Axis::kExtent};
const std::vector<Axis> kPoolAxes = {Axis::kBatch, Axis::kChannels, Axis::kExtent, Axis::kWindow};

// Two axes that would make one size the product of two large ones (or are one size).
bool conflict(Axis a, Axis b) {
  auto is = [&](Axis x, Axis y) { return (a == x && b == y) || (a == y && b == x); };
  return a == b || is(Axis::kInPerGroup, Axis::kDepthwise) || is(Axis::kInPerGroup, Axis::kMultiplier) ||
         is(Axis::kOutPerGroup, Axis::kMultiplier) || is(Axis::kOutPerGroup, Axis::kDepthwise) ||
         is(Axis::kDepthwise, Axis::kMultiplier);
}

// 2^k - 1, 2^k or 2^k + 1 with k in the axis' range (a pool window: 2^8 taps in 1-D,
// 2^4 a side in 2-D).
int64_t size_of(Axis a, int64_t k_index, int64_t offset_index, int64_t window_form) {
  int64_t lo = 5, hi = 8;
  if (a == Axis::kBatch) lo = 3, hi = 5;
  if (a == Axis::kExtent) lo = 3, hi = 7;
  if (a == Axis::kWindow) lo = hi = window_form == 0 ? 8 : 4;
  const int64_t k = lo + k_index % (hi - lo + 1);
  return (int64_t{1} << k) + offset_index % 3 - 1;
}

struct Large {
  Axis axis;
  int64_t size;
};

bool pool(const Case& c) { return std::holds_alternative<MaxPoolParams>(c.op); }

DimGeometry dim_of(const Case& c, size_t d) {
  return pool(c) ? unchecked_pool_geometry(c).spatial.dims[d] : unchecked_conv_geometry(c).spatial.dims[d];
}

// A conv with zeros padding has, in every dim, an output whose window reads the input
// (else every output is the bias alone: window_draft.cpp's rule for the generators).
bool reads_input(const Case& c) {
  if (pool(c)) return true;
  const ConvGeometry g = unchecked_conv_geometry(c);
  if (g.mode != PaddingMode::kZeros) return true;
  for (const DimGeometry& d : g.spatial.dims) {
    bool any = false;
    for (int64_t o = 0; o < d.out && !any; ++o) {
      const int64_t first = o * d.stride - d.pad_lo;
      for (int64_t k = 0; k < d.kernel && !any; ++k) any = first + k * d.dilation >= 0 && first + k * d.dilation < d.in;
    }
    if (!any) return false;
  }
  return true;
}

// The input extent of dim d that gives `target` outputs there, searched around the
// extent formula (SAME padding and ceil_mode move it by a stride at most).
bool set_extent(Case& c, size_t d, int64_t target) {
  const DimGeometry g = dim_of(c, d);
  const int64_t guess = std::max<int64_t>(1, (target - 1) * g.stride + g.extent() - g.pad_lo - g.pad_hi);
  const int64_t reach = 2 * g.stride + g.extent() + 8;
  for (int64_t in = std::max<int64_t>(1, guess - reach); in <= guess + reach; ++in) {
    c.input.spatial[d] = in;
    if (validate(c).ok() && dim_of(c, d).out == target && reads_input(c)) return true;
  }
  return false;
}

// Keeps spatial dim d alone (each dim is valid on its own: window_draft.cpp draws them so).
void keep_dim(Case& c, size_t d) {
  c.input.spatial = {c.input.spatial[d]};
  const WindowRef w = window_of(c);
  w.kernel = {w.kernel[d]};
  if (!w.stride.empty()) w.stride = {w.stride[d]};
  if (w.dilation != nullptr && !w.dilation->empty()) *w.dilation = {(*w.dilation)[d]};
  if (!w.padding.pairs.empty()) w.padding.pairs = {w.padding.pairs[d]};
}

// Dim d as one tap on `in` inputs, without padding: `in` outputs.
void one_tap(Case& c, size_t d, int64_t in) {
  c.input.spatial[d] = in;
  const WindowRef w = window_of(c);
  w.kernel[d] = 1;
  if (!w.stride.empty()) w.stride[d] = 1;
  if (w.dilation != nullptr && !w.dilation->empty()) (*w.dilation)[d] = 1;
  if (!w.padding.pairs.empty()) w.padding.pairs[d] = {0, 0};
}

// A max pool's window past 256 taps: 1-D (size taps, the drawn stride or none) or a
// global 2-D pool (size x size over an input of that size).
void set_window(Case& c, int64_t size, int64_t form) {
  MaxPoolParams& p = std::get<MaxPoolParams>(c.op);
  if (form == 0) {
    c.input.spatial = {size + std::min<int64_t>(c.input.spatial.back() - 1, 8)};
    p.kernel = {size};
    if (!p.stride.empty()) p.stride = {p.stride.back()};
  } else {
    c.input.spatial = {size, size};
    p.kernel = {size, size};
    p.stride = {};
    p.ceil_mode = false;
  }
  p.dilation = {};
  p.padding = PadSpec{};
}

struct Channels {
  int64_t groups, in, out;  // in and out per group
};

// The conv's channels; threshold cases change channels of a conv only (a pool's are x's).
ConvParams& conv_params(Case& c) {
  ConvParams* p = conv_of(c);
  KC_INVARIANT(p != nullptr);
  return *p;
}

Channels channels_of(Case& c) {
  const ConvParams& p = conv_params(c);
  return {p.groups, c.input.channels / p.groups, p.out_channels / p.groups};
}

void set_channels(Case& c, const Channels& ch) {
  ConvParams& p = conv_params(c);
  p.groups = ch.groups;
  c.input.channels = ch.groups * ch.in;
  p.out_channels = ch.groups * ch.out;
}

const Large* find(const std::vector<Large>& large, Axis a) {
  for (const Large& l : large) {
    if (l.axis == a) return &l;
  }
  return nullptr;
}

// The channel counts with every one that is not large at its least.
Channels least_channels(const Channels& ch, const std::vector<Large>& large) {
  if (const Large* dw = find(large, Axis::kDepthwise)) return {dw->size, 1, 1};
  const Large* in = find(large, Axis::kInPerGroup);
  const Large* out = find(large, Axis::kOutPerGroup);
  const Large* mult = find(large, Axis::kMultiplier);
  return {mult ? std::min<int64_t>(ch.groups, 2) : 1, in ? in->size : 1, out ? out->size : mult ? mult->size : 1};
}

void set_large(Case& c, const Large& l, int64_t window_form) {
  switch (l.axis) {
    case Axis::kBatch:
      c.input.batch = l.size;
      return;
    case Axis::kChannels:
      c.input.channels = l.size;
      return;
    case Axis::kWindow:
      set_window(c, l.size, window_form);
      return;
    case Axis::kExtent:
      return;  // last: set_extent
    default:
      break;
  }
  Channels ch = channels_of(c);
  if (l.axis == Axis::kInPerGroup) ch.in = l.size;
  if (l.axis == Axis::kOutPerGroup) ch.out = l.size;
  if (l.axis == Axis::kDepthwise) ch = {l.size, 1, std::min<int64_t>(ch.out, 2)};
  if (l.axis == Axis::kMultiplier) ch = {ch.groups, 1, l.size};
  set_channels(c, ch);
}

// Step `step` of the cuts (false: nothing left to cut). `dim` is the extent axis' dim.
bool cut(Case& c, int step, const std::vector<Large>& large, size_t& dim) {
  const bool window = find(large, Axis::kWindow) != nullptr;
  switch (step) {
    case 0:
      if (!find(large, Axis::kBatch)) c.input.batch = 1;
      return true;
    case 1:
      if (window) return true;  // a 1-D window, or a global 2-D pool whose rank is the point
      keep_dim(c, find(large, Axis::kExtent) ? dim : c.input.spatial.size() - 1);
      dim = 0;
      return true;
    case 2:
      if (pool(c) && !find(large, Axis::kChannels)) c.input.channels = 1;
      if (!pool(c)) set_channels(c, least_channels(channels_of(c), large));
      return true;
    case 3:
      if (window) std::get<MaxPoolParams>(c.op).stride = {};  // windows side by side
      return true;
    case 4:
      for (size_t d = 0; d < c.input.spatial.size() && !window; ++d) {
        const Large* extent = find(large, Axis::kExtent);
        one_tap(c, d, extent && d == dim ? extent->size : 1);
      }
      return true;
    default:
      return false;
  }
}

struct Attempt {
  Case c;
  bool fits = false;
};

std::optional<Attempt> attempt(const Case& small, const std::vector<Large>& large, const ThresholdDraft& d,
                               const Caps& caps) {
  Case c = small;
  for (const Large& l : large) set_large(c, l, d.window);
  size_t dim = static_cast<size_t>(d.dim) % c.input.spatial.size();
  const Large* extent = find(large, Axis::kExtent);
  if (extent && !set_extent(c, dim, extent->size)) return std::nullopt;
  for (int step = 0; threshold_cost_of(c) > caps.threshold_cost && cut(c, step, large, dim); ++step) {
    if (extent && !set_extent(c, dim, extent->size)) return std::nullopt;
  }
  if (!validate(c).ok() || !reads_input(c)) return std::nullopt;
  return Attempt{c, threshold_cost_of(c) <= caps.threshold_cost};
}

}  // namespace

rc::Gen<ThresholdDraft> threshold_draft() {
  using rc::gen::set;
  const auto pair = rc::gen::container<std::array<int64_t, 2>>(between(0, 11));
  return rc::gen::build<ThresholdDraft>(
      set(&ThresholdDraft::first, between(0, 59)), set(&ThresholdDraft::second, between(0, 59)),
      set(&ThresholdDraft::two, between(0, 1)), set(&ThresholdDraft::k, pair),
      set(&ThresholdDraft::offset, rc::gen::container<std::array<int64_t, 2>>(between(0, 2))),
      set(&ThresholdDraft::dim, between(0, 5)), set(&ThresholdDraft::window, between(0, 1)));
}

Caps threshold_caps(const Caps& caps) {
  Caps t = caps;
  t.extent = {12, 6, 4};
  t.kernel = {5, 3, 2};
  t.dilation = {2, 2, 1};
  t.stride = 2;
  t.pad = 2;
  t.batch = 2;
  t.groups = 2;
  t.channels_per_group = 3;
  return t;
}

Case apply_threshold(const Case& c, const ThresholdDraft& d, const Caps& caps) {
  const std::vector<Axis>& axes = pool(c) ? kPoolAxes : kConvAxes;
  const int64_t n = static_cast<int64_t>(axes.size());
  std::vector<Large> large;
  for (int i = 0; i < 2; ++i) {
    const Axis a = axes[static_cast<size_t>((i == 0 ? d.first : d.second) % n)];
    if (i == 1 && (d.two == 0 || conflict(large[0].axis, a))) break;
    large.push_back({a, size_of(a, d.k[static_cast<size_t>(i)], d.offset[static_cast<size_t>(i)], d.window)});
  }
  if (const auto both = attempt(c, large, d, caps); both && both->fits) return both->c;
  large.resize(1);
  if (const auto one = attempt(c, large, d, caps)) return one->c;
  return c;
}

int64_t threshold_cost_of(const Case& c) {
  int64_t x = 0, w = 0, b = 0, y = 0, work = 0, samples = 1, groups = 1;  // the oracle loops over both
  if (pool(c)) {
    const PoolGeometry g = unchecked_pool_geometry(c);
    x = g.batch * g.channels * g.spatial.in_count();
    y = g.batch * g.channels * g.spatial.out_count();
    work = 2 * y * g.spatial.kernel_count();  // a comparison and its index: about two multiply-adds
    samples = g.batch;
  } else {
    const ConvGeometry g = unchecked_conv_geometry(c);
    x = g.batch * g.in_channels * g.spatial.in_count();
    w = g.out_channels * g.in_per_group() * g.spatial.kernel_count();
    b = g.bias ? g.out_channels : 0;
    y = g.batch * g.out_channels * g.spatial.out_count();
    work = y * g.in_per_group() * g.spatial.kernel_count();
    samples = g.batch;
    groups = g.groups;
  }
  // gradcheck differences every input element of a small case (4 runs each, and one run
  // per output where there are few); a larger one takes a few dozen runs in all.
  const bool each = x + w + b <= 512;
  const int64_t runs = each ? 4 * (x + w + b) + (y <= 256 ? y : 0) : 96;
  const int64_t per_run = 30 + 3 * samples + groups / 2 + (x + w + y) / 16 + work / 256;
  return runs * per_run + 2 * (x + w + y) / 5 + work / 64;
}

}  // namespace kc::gen::detail
