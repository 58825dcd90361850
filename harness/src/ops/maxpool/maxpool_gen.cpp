// The max pool module's generator: a pool window (with dilation), batch, channels, the
// mode (training on three in four), the tie rule, the dtype and the data (more ties).
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

struct PoolDraft {
  detail::WindowDraft window;
  int64_t batch = 1, channels = 1;
  PoolMode mode = PoolMode::kTraining;
  TieRule tie = TieRule::kFirst;
  DType dtype = DType::kF64;
  DataDraft data;
};

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

}  // namespace
}  // namespace detail

rc::Gen<Case> op_case(const Options& options, const MaxPoolParams&) {
  return rc::gen::mapcat(detail::sized(options), [](const detail::Sized& s) {
    return detail::realised(s, detail::pool_draft(s.o), detail::realise_pool);
  });
}

namespace detail {
WindowRef window_ref(MaxPoolParams& p) { return WindowRef{p.kernel, p.stride, &p.dilation, p.padding, true}; }
ConvParams* conv_params(MaxPoolParams&) { return nullptr; }
}  // namespace detail

namespace detail {
namespace {

Breakage pool_pad_over_half(Case& c, size_t dim, int64_t a) {
  WindowRef w = make_explicit(c);
  const int64_t half = window_extent(w, dim) / 2;
  w.padding.pairs[dim][static_cast<size_t>(a % 2)] = half + a;
  const auto [lo, hi] = w.padding.pairs[dim];
  return {"maxpool.padding: dim " + std::to_string(dim) + " pads " + num(lo) + "/" + num(hi) +
              ", more than half the window extent " + num(window_extent(w, dim)),
          {}};
}
// Kernel 2 with dilation d >= 3 and half a window of left padding: window 0 has one
// tap in the padding and the other past an input of at most d - lo elements.
Breakage pool_window_over_padding(Case& c, size_t dim, int64_t a) {
  WindowRef w = make_explicit(c);
  const int64_t d = 2 + std::min<int64_t>(a, 3), e = d + 1, lo = e / 2;
  const int64_t in = 1 + (a - 1) % (d - lo);
  w.kernel[dim] = 2;
  (*w.dilation)[dim] = d;
  w.stride[dim] = e;
  c.input.spatial[dim] = in;
  w.padding.pairs[dim] = {lo, std::max<int64_t>(0, e - in - lo)};
  return {"maxpool: dim " + std::to_string(dim) + ": window 0 covers no input element", {}};
}

}  // namespace

std::vector<Rule> op_rules(const Case&, const MaxPoolParams&) {
  return joined(single_op_rules(), {{"pool_pad_over_half", pool_pad_over_half},
                                    {"pool_window_over_padding", pool_window_over_padding},
                                    {"pool_weights", pool_weights}});
}
std::string_view bool_field(const MaxPoolParams&) { return "ceil_mode"; }
}  // namespace detail

namespace detail {
std::vector<Quantity> sweep_quantities(const MaxPoolParams&) { return pool_quantities(); }
void make_minimal(Case& c, MaxPoolParams&) { c.checks.push_back("argmax"); }
}  // namespace detail

}  // namespace kc::gen
