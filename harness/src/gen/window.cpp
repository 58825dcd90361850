// The spatial window of a generated case: drawn per dim, then realised as a geometry
// that validate() accepts. Validity is decided by validate() itself on a one-dim case
// per dim, so the generator cannot drift from the rules it must obey.
#include "window.h"

#include <algorithm>

#include "kc/validate.h"
#include "pick.h"

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

int64_t extent(const DimDraft& d) { return d.dilation * (d.kernel - 1) + 1; }

bool same_form(PadForm f) { return f == PadForm::kSame || f == PadForm::kSameLower; }

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

// validate() on the one-dim case made of dim `dim` with input extent `in`.
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
  return validate(c).ok();
}

}  // namespace

rc::Gen<WindowDraft> window_draft(bool pool, const Caps& caps) {
  using rc::gen::just;
  using rc::gen::set;
  // Rank 1 keeping the innermost dim first: a shrink drops leading dims first.
  const auto keep = pick<std::vector<size_t>>({{1, {2}}, {1, {1}}, {1, {0}}, {1, {1, 2}}, {1, {0, 2}},
                                               {1, {0, 1}}, {3, {0, 1, 2}}});
  const auto pad = pick<PadForm>({{3, PadForm::kPairs}, {2, PadForm::kSymmetric}, {1, PadForm::kUniform},
                                  {1, PadForm::kValid}, {2, PadForm::kSame}, {1, PadForm::kSameLower}});
  const auto mode = pick<PaddingMode>({{4, PaddingMode::kZeros}, {2, PaddingMode::kReflect},
                                       {2, PaddingMode::kReplicate}, {2, PaddingMode::kCircular}});
  return rc::gen::build<WindowDraft>(
      set(&WindowDraft::keep, keep),
      set(&WindowDraft::dims, rc::gen::container<std::vector<DimDraft>>(3, dim_draft(caps))),
      set(&WindowDraft::caps, just(caps)),
      set(&WindowDraft::pad, pad),
      set(&WindowDraft::mode, pool ? just(PaddingMode::kZeros) : mode),
      set(&WindowDraft::pool, just(pool)),
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

}  // namespace kc::gen::detail
