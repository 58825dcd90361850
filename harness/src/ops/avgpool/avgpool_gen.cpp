// The average pool module's generator: a pool window without dilation, batch, channels,
// count_include_pad on half, a divisor on a few, the dtype and the data. Threshold sizes
// (threshold.h) are drawn for conv and max pool only: an average pool draws within the
// caps of the mode it is given.
#include "core/format.h"
#include "core/validate.h"
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

}  // namespace
}  // namespace detail

rc::Gen<Case> op_case(const Options& options, const AvgPoolParams&) {
  return rc::gen::mapcat(detail::sized(options), [](detail::Sized s) {
    s.threshold = false;
    return detail::realised(s, detail::avgpool_draft(s.o), detail::realise_avgpool);
  });
}

namespace detail {
WindowRef window_ref(AvgPoolParams& p) { return WindowRef{p.kernel, p.stride, nullptr, p.padding, true}; }
ConvParams* conv_params(AvgPoolParams&) { return nullptr; }
}  // namespace detail

namespace detail {
namespace {

Breakage avg_divisor_not_positive(Case& c, size_t, int64_t a) {
  std::get<AvgPoolParams>(c.op).divisor = 1 - a;
  return {"avgpool.divisor: " + num(1 - a) + " is not a divisor", {}};
}
// A window of only padding in dim `dim` (kernel and stride 1 there, `a` elements of
// left padding) that count_include_pad: false would divide by 0. Another dim's window
// may be the one named first, so the dim is left out of the expected text.
Breakage avg_window_over_padding(Case& c, size_t dim, int64_t a) {
  WindowRef w = make_explicit(c);
  w.kernel[dim] = 1;
  w.stride[dim] = 1;
  w.padding.pairs[dim] = {a, 0};
  std::get<AvgPoolParams>(c.op).count_include_pad = false;
  return {"covers no input element (only padding), and count_include_pad: false would divide by 0", {}};
}
}  // namespace

std::vector<Rule> op_rules(const Case&, const AvgPoolParams&) {
  return joined(single_op_rules(), {{"avg_divisor_not_positive", avg_divisor_not_positive},
                                    {"avg_window_over_padding", avg_window_over_padding},
                                    {"pool_weights", pool_weights}});
}
std::string_view bool_field(const AvgPoolParams&) { return "count_include_pad"; }
}  // namespace detail

namespace detail {
std::vector<Quantity> sweep_quantities(const AvgPoolParams&) { return pool_quantities(); }
void make_minimal(Case&, AvgPoolParams&) {}
}  // namespace detail

}  // namespace kc::gen
