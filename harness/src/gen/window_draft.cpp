// The spatial window of a generated case: drawn per dim, then realised as a geometry
// that validate() accepts. Validity is decided by validate() itself on a one-dim case
// per dim (a one-dim stack for op: stack), so the generator cannot drift from the
// rules it must obey.
#include "gen/window_draft.h"

#include <algorithm>

#include "core/validate.h"
#include "pick.h"
#include "stack/stack.h"

namespace kc::gen::detail {
namespace {

int64_t largest(const std::array<int64_t, 3>& caps) { return std::max({caps[0], caps[1], caps[2]}); }

rc::Gen<DimDraft> dim_draft(const Caps& caps) {
  using rc::gen::inRange;
  using rc::gen::set;
  return rc::gen::build<DimDraft>(set(&DimDraft::extra, inRange<int64_t>(0, largest(caps.extent))),
                                  set(&DimDraft::kernel, inRange<int64_t>(1, largest(caps.kernel) + 1)),
                                  set(&DimDraft::stride, inRange<int64_t>(1, caps.stride + 1)),
                                  set(&DimDraft::dilation, inRange<int64_t>(1, largest(caps.dilation) + 1)),
                                  set(&DimDraft::lo, inRange<int64_t>(0, caps.pad + 1)),
                                  set(&DimDraft::hi, inRange<int64_t>(0, caps.pad + 1)));
}

// v in [lo, from] mapped onto [lo, to], rounded: keeps order, so shrinking still
// moves toward lo.
int64_t rescale(int64_t v, int64_t lo, int64_t from, int64_t to) {
  if (from <= lo) return lo;
  return lo + ((v - lo) * (to - lo) + (from - lo) / 2) / (from - lo);
}

// The drawn dims the case keeps, scaled to the caps of its rank.
std::vector<DimDraft> kept_dims(const WindowDraft& d) {
  const size_t r = d.keep.size() - 1;
  const Caps& c = d.caps;
  std::vector<DimDraft> dims;
  for (size_t i : d.keep) {
    DimDraft dim = d.dims[i];
    dim.extra = rescale(dim.extra, 0, largest(c.extent) - 1, c.extent[r] - 1);
    dim.kernel = rescale(dim.kernel, 1, largest(c.kernel), c.kernel[r]);
    dim.dilation = rescale(dim.dilation, 1, largest(c.dilation), c.dilation[r]);
    dims.push_back(dim);
  }
  return dims;
}

int64_t window_extent(int64_t kernel, int64_t dilation) { return dilation * (kernel - 1) + 1; }
int64_t extent(const DimDraft& d) { return window_extent(d.kernel, d.dilation); }

bool same_form(PadForm f) { return f == PadForm::kSame || f == PadForm::kSameLower; }
bool same_form_kind(PadKind k) { return k == PadKind::kSame || k == PadKind::kSameLower; }

// The explicit [lo, hi] of dim i as drawn; a pool clamps each side to half the window
// (a wider pad is invalid), uniformly over dims for the uniform form.
std::array<int64_t, 2> drawn_pads(const WindowDraft& d, const std::vector<DimDraft>& dims, size_t i) {
  const DimDraft& dim = dims[i];
  std::array<int64_t, 2> p = {0, 0};
  if (d.pad == PadForm::kPairs) p = {dim.lo, dim.hi};
  if (d.pad == PadForm::kSymmetric) p = {dim.lo, dim.lo};
  if (d.pad == PadForm::kUniform) {
    int64_t v = dims[0].lo;
    for (const DimDraft& other : dims) v = d.pool ? std::min(v, extent(other) / 2) : v;
    p = {v, v};
  }
  if (d.pool) p = {std::min(p[0], extent(dim) / 2), std::min(p[1], extent(dim) / 2)};
  return p;
}

PadSpec dim_padding(const WindowDraft& d, std::array<int64_t, 2> pads) {
  if (d.pad == PadForm::kValid) return PadSpec{PadKind::kValid, {}};
  if (d.pad == PadForm::kSame) return PadSpec{PadKind::kSame, {}};
  if (d.pad == PadForm::kSameLower) return PadSpec{PadKind::kSameLower, {}};
  return PadSpec{PadKind::kExplicit, {pads}};
}

int64_t stride_of(const WindowDraft& d, const DimDraft& dim) {
  return d.pool && d.default_stride ? dim.kernel : dim.stride;
}

// Whether some output of a conv dim with zeros padding has a window tap inside the
// input. Without one every output is the bias alone and every gradient to x and w is
// zero: valid, but nothing a check can tell apart from a kernel that writes zeros.
// Reflect, replicate and circular padding copy input elements, so only zeros padding
// can cut the output off (as for a stack, stack_dim_valid(); both by live_after()).
std::vector<char> live_after(const DimGeometry& g, const std::vector<char>& live, bool pool);

bool touches_input(const Case& c) {
  const DimGeometry dim = unchecked_conv_geometry(c).spatial.dims[0];
  const std::vector<char> out = live_after(dim, std::vector<char>(static_cast<size_t>(dim.in), 1), false);
  return std::find(out.begin(), out.end(), 1) != out.end();
}

// validate() on the one-dim case made of dim `dim` with input extent `in`; a conv
// with zeros padding must also have an output that sees the input (touches_input).
bool dim_valid(const WindowDraft& d, const DimDraft& dim, int64_t in, const PadSpec& pad) {
  Case c;
  c.input = InputSpec{1, 1, {in}};
  if (d.pool) {
    MaxPoolParams p;
    p.kernel = {dim.kernel};
    p.stride = {stride_of(d, dim)};
    p.dilation = {dim.dilation};
    p.padding = pad;
    p.ceil_mode = d.ceil_mode;
    c.op = p;
  } else {
    ConvParams p;
    p.kernel = {dim.kernel};
    p.stride = {dim.stride};
    p.dilation = {dim.dilation};
    p.padding = pad;
    p.padding_mode = d.mode;
    c.op = p;
  }
  if (!validate(c).ok()) return false;
  return d.pool || d.mode != PaddingMode::kZeros || touches_input(c);
}

// One spatial dim of a stack: its conv and pool window, the input extent beyond the
// least one a single conv layer fits in (extra), and the least extent of the last
// layer's output.
struct StackDim {
  int64_t kernel, stride, dilation, extra, least_out;
  PadSpec pad;                        // the case's kind, with this dim's pair when explicit
  std::optional<MaxPoolParams> pool;  // with this dim's entries
};

int64_t pool_stride(const MaxPoolParams& p) { return p.stride.empty() ? p.kernel[0] : p.stride[0]; }

// The least input extent from which `depth` layers leave an output of least_out, as
// the floor-mode extent formula runs backwards (ceil_mode only adds windows, and SAME
// never erodes below 1); past `cap` the result is only known to exceed it.
int64_t least_input(const StackDim& d, int64_t depth, int64_t cap) {
  const int64_t e = window_extent(d.kernel, d.dilation);
  const int64_t pads = d.pad.kind == PadKind::kExplicit ? d.pad.pairs[0][0] + d.pad.pairs[0][1] : 0;
  int64_t o = d.least_out;
  for (int64_t l = 0; l < depth && o <= cap; ++l) {
    if (d.pool) {
      const auto [lo, hi] = d.pool->padding.pairs[0];
      o = std::max<int64_t>(1, (o - 1) * pool_stride(*d.pool) + d.pool->kernel[0] - lo - hi);
    }
    o = same_form_kind(d.pad.kind) ? (o - 1) * d.stride + 1 : std::max<int64_t>(1, (o - 1) * d.stride + e - pads);
  }
  return o;
}

// The one-dim stack of `depth` layers made of dim `d`, with input `in`.
Case one_dim_stack(const StackDim& d, PaddingMode mode, int64_t depth, int64_t in) {
  Case c;
  c.input = InputSpec{1, 1, {in}};
  StackParams p;
  p.depth = depth;
  p.conv.kernel = {d.kernel};
  p.conv.stride = {d.stride};
  p.conv.dilation = {d.dilation};
  p.conv.padding = d.pad;
  p.conv.padding_mode = mode;
  p.pool = d.pool;
  c.op = p;
  return c;
}

// The positions of a layer's output (one dim) that depend on the stack's input, from
// those of its input: a conv output where some tap is such a position (with zeros
// padding a window can fall on padding and cut-off positions only, and then holds the
// bias alone); a pool output only where every tap inside the input is one, since its
// maximum, where the gradient goes, may be any of them.
std::vector<char> live_after(const DimGeometry& g, const std::vector<char>& live, bool pool) {
  std::vector<char> out(static_cast<size_t>(g.out), 0);
  for (int64_t o = 0; o < g.out; ++o) {
    bool any = false, every = true;
    for (int64_t k = 0; k < g.kernel; ++k) {
      const int64_t i = o * g.stride - g.pad_lo + k * g.dilation;
      if (i < 0 || i >= g.in) continue;
      any = any || live[static_cast<size_t>(i)];
      every = every && live[static_cast<size_t>(i)];
    }
    out[static_cast<size_t>(o)] = any && (every || !pool);
  }
  return out;
}

// validate() on the one-dim stack of `depth` layers made of dim `d` with input `in`,
// and some position of the last output depends on the input. Without that, every
// gradient to the stack's input is zero: valid, but nothing a check can tell apart
// from a kernel that writes zeros. Reflect, replicate and circular padding copy input
// elements, so only zeros padding can cut the output off.
bool stack_dim_valid(const StackDim& d, PaddingMode mode, int64_t depth, int64_t in) {
  const Case c = one_dim_stack(d, mode, depth, in);
  if (!validate(c).ok()) return false;
  if (mode != PaddingMode::kZeros) return true;
  std::vector<char> live(static_cast<size_t>(in), 1);
  for (const StackLayer& layer : unchecked_stack_layers(c)) {
    live = live_after(layer.conv.spatial.dims[0], live, false);
    if (layer.pool) live = live_after(layer.pool->spatial.dims[0], live, true);
  }
  return std::find(live.begin(), live.end(), 1) != live.end();
}

// The widest layer output of dim `d` for `depth` layers from input `in`: padding
// wider than the window makes the extent grow at every layer.
int64_t widest_output(const StackDim& d, PaddingMode mode, int64_t depth, int64_t in) {
  const Case c = one_dim_stack(d, mode, depth, in);
  int64_t widest = 0;
  for (const StackLayer& layer : unchecked_stack_layers(c)) {
    widest = std::max({widest, layer.conv.spatial.dims[0].out, layer.out_shape().back()});
  }
  return widest;
}

// The input extent of dim `d` for `depth` layers, or nothing where no input up to
// `cap` leaves every layer valid, or some layer's output is wider than twice `cap`.
// Depth 1 always has one.
std::optional<int64_t> stack_input(const StackDim& d, PaddingMode mode, int64_t depth, int64_t cap) {
  const int64_t least = least_input(d, depth, cap);
  if (depth > 1 && least > cap) return std::nullopt;
  // Past the formula only the padding-mode rules and the cut-off output can fail, and
  // for one layer those hold once the input is two windows wider (as in realise()).
  // A deeper stack that fails even there needs a lower depth: a SAME layer with a
  // stride collapses every input to 1 after a few layers, too small for reflect
  // padding.
  const int64_t pool_extent = d.pool ? d.pool->kernel[0] + pool_stride(*d.pool) : 0;
  const int64_t limit = least + d.extra + 2 * (window_extent(d.kernel, d.dilation) + pool_extent) + 8;
  if (depth > 1 && !stack_dim_valid(d, mode, depth, limit)) return std::nullopt;
  int64_t in = least + d.extra;
  while (in < limit && !stack_dim_valid(d, mode, depth, in)) ++in;
  if (depth > 1 && widest_output(d, mode, depth, in) > 2 * cap) return std::nullopt;
  return in;
}

// A stack layer's max pool over the kept dims, each pad within half the window.
MaxPoolParams stack_pool(const StackPoolDraft& pool, const std::vector<size_t>& keep) {
  MaxPoolParams p;
  p.padding = PadSpec{PadKind::kExplicit, {}};
  p.ceil_mode = pool.ceil_mode;
  p.tie = pool.tie;
  for (size_t i : keep) {
    const PoolDimDraft& d = pool.dims[i];
    p.kernel.push_back(d.kernel);
    if (!pool.default_stride) p.stride.push_back(d.stride);
    p.padding.pairs.push_back({std::min(d.lo, d.kernel / 2), std::min(d.hi, d.kernel / 2)});
  }
  return p;
}

// The dims of a stack's window, each on its own, with the extra input the conv window
// drew beyond the least extent one conv layer fits in (realise() adds it to that).
std::vector<StackDim> stack_dims(const Window& w, const std::optional<MaxPoolParams>& pool, int64_t least_out) {
  std::vector<StackDim> dims;
  for (size_t i = 0; i < w.spatial.size(); ++i) {
    StackDim d{w.kernel[i], w.stride[i], w.dilation[i], 0, least_out, PadSpec{w.padding.kind, {}}, std::nullopt};
    int64_t pads = 0;
    if (w.padding.kind == PadKind::kExplicit) {
      d.pad.pairs = {w.padding.pairs[i]};
      pads = w.padding.pairs[i][0] + w.padding.pairs[i][1];
    }
    const int64_t base =
        same_form_kind(w.padding.kind) ? 1 : std::max<int64_t>(1, window_extent(d.kernel, d.dilation) - pads);
    d.extra = std::max<int64_t>(0, w.spatial[i] - base);
    if (pool) {
      MaxPoolParams p = *pool;
      p.kernel = {pool->kernel[i]};
      if (!p.stride.empty()) p.stride = {pool->stride[i]};
      p.padding.pairs = {pool->padding.pairs[i]};
      d.pool = p;
    }
    dims.push_back(std::move(d));
  }
  return dims;
}

}  // namespace

rc::Gen<WindowDraft> window_draft(bool pool, const Caps& caps) {
  using rc::gen::just;
  using rc::gen::set;
  // Rank 1 keeping the innermost dim first: a shrink drops leading dims first.
  const auto keep =
      pick<std::vector<size_t>>({{1, {2}}, {1, {1}}, {1, {0}}, {1, {1, 2}}, {1, {0, 2}}, {1, {0, 1}}, {3, {0, 1, 2}}});
  const auto pad = pick<PadForm>({{3, PadForm::kPairs},
                                  {2, PadForm::kSymmetric},
                                  {1, PadForm::kUniform},
                                  {1, PadForm::kValid},
                                  {2, PadForm::kSame},
                                  {1, PadForm::kSameLower}});
  const auto mode = pick<PaddingMode>({{4, PaddingMode::kZeros},
                                       {2, PaddingMode::kReflect},
                                       {2, PaddingMode::kReplicate},
                                       {2, PaddingMode::kCircular}});
  return rc::gen::build<WindowDraft>(
      set(&WindowDraft::keep, keep),
      set(&WindowDraft::dims, rc::gen::container<std::vector<DimDraft>>(3, dim_draft(caps))),
      set(&WindowDraft::caps, just(caps)), set(&WindowDraft::pad, pad),
      set(&WindowDraft::mode, pool ? just(PaddingMode::kZeros) : mode), set(&WindowDraft::pool, just(pool)),
      set(&WindowDraft::default_stride, pool ? flag(30) : just(false)),
      set(&WindowDraft::ceil_mode, pool ? flag(35) : just(false)));
}

Window realise(const WindowDraft& d) {
  const std::vector<DimDraft> dims = kept_dims(d);
  Window w;
  w.padding = dim_padding(d, {0, 0});
  w.padding.pairs.clear();
  for (size_t i = 0; i < dims.size(); ++i) {
    const DimDraft& dim = dims[i];
    const std::array<int64_t, 2> pads = drawn_pads(d, dims, i);
    const PadSpec pad = dim_padding(d, pads);
    // The smallest extent the window fits in, then the drawn extra; the loop only
    // runs for the rules a formula does not capture (reflect/circular widths, a pool
    // window that must touch the input), and terminates: every rule holds once the
    // input is at least two window extents wide.
    const int64_t base = same_form(d.pad) ? 1 : std::max<int64_t>(1, extent(dim) - pads[0] - pads[1]);
    int64_t in = base + dim.extra;
    while (!dim_valid(d, dim, in, pad) && in < base + dim.extra + 2 * extent(dim) + 8) ++in;
    w.spatial.push_back(in);
    w.kernel.push_back(dim.kernel);
    if (!(d.pool && d.default_stride)) w.stride.push_back(dim.stride);
    w.dilation.push_back(dim.dilation);
    if (w.padding.kind == PadKind::kExplicit) w.padding.pairs.push_back(pads);
  }
  return w;
}

rc::Gen<StackPoolDraft> stack_pool_draft() {
  using rc::gen::set;
  const auto dim =
      rc::gen::build<PoolDimDraft>(set(&PoolDimDraft::kernel, between(1, 3)), set(&PoolDimDraft::stride, between(1, 2)),
                                   set(&PoolDimDraft::lo, between(0, 1)), set(&PoolDimDraft::hi, between(0, 1)));
  return rc::gen::build<StackPoolDraft>(
      set(&StackPoolDraft::on, flag(35)),
      set(&StackPoolDraft::dims, rc::gen::container<std::vector<PoolDimDraft>>(3, dim)),
      set(&StackPoolDraft::default_stride, flag(30)), set(&StackPoolDraft::ceil_mode, flag(25)),
      set(&StackPoolDraft::tie, pick<TieRule>({{2, TieRule::kFirst}, {1, TieRule::kLast}, {1, TieRule::kAny}})));
}

StackWindow realise_stack(const WindowDraft& conv, const StackPoolDraft& pool, int64_t depth, int64_t least_out) {
  StackWindow s;
  s.conv = realise(conv);
  if (pool.on) s.pool = stack_pool(pool, conv.keep);
  const std::vector<StackDim> dims = stack_dims(s.conv, s.pool, least_out);
  const int64_t cap = conv.caps.stack_extent[dims.size() - 1];
  for (s.depth = std::max<int64_t>(depth, 1);; --s.depth) {
    Dims spatial;
    for (const StackDim& d : dims) {
      const std::optional<int64_t> in = stack_input(d, conv.mode, s.depth, cap);
      if (!in) break;
      spatial.push_back(*in);
    }
    if (spatial.size() == dims.size() || s.depth == 1) {
      s.conv.spatial = std::move(spatial);
      return s;
    }
  }
}

}  // namespace kc::gen::detail
