// The conv module's generator (gen.h, "Valid cases"): a window (window_draft.h), batch,
// groups with channels per group (depthwise on a fifth of the cases; multiples of 8 in
// an aligned case), a bias on half, the dtype and the data. conv_bias_relu draws the
// same with its bias always there.
#include "ops/conv/conv_gen.h"

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

struct ConvDraft {
  detail::WindowDraft window;
  int64_t batch = 1, groups = 1, in_per_group = 1, out_per_group = 1;
  int64_t multiple = 1;  // channels per group in units of (Caps::channel_multiple)
  bool depthwise = false, bias = false;
  DType dtype = DType::kF64;
  DataDraft data;
};

rc::Gen<ConvDraft> conv_draft(bool fused, const Options& o) {
  const Caps& k = o.caps;
  return rc::gen::build<ConvDraft>(
      set(&ConvDraft::window, detail::window_draft(false, k)), set(&ConvDraft::batch, inRange<int64_t>(1, k.batch + 1)),
      set(&ConvDraft::groups, inRange<int64_t>(1, k.groups + 1)),
      set(&ConvDraft::in_per_group, inRange<int64_t>(1, k.channels_per_group + 1)),
      set(&ConvDraft::out_per_group, inRange<int64_t>(1, k.channels_per_group + 1)),
      set(&ConvDraft::depthwise, flag(static_cast<uint64_t>(k.depthwise_percent))),
      set(&ConvDraft::bias, fused ? just(true) : flag(50)), set(&ConvDraft::dtype, dtype_gen()),
      set(&ConvDraft::data, data_draft(false, o)), set(&ConvDraft::multiple, just(k.channel_multiple)));
}

Case realise_conv(const ConvDraft& d, bool fused) {
  const detail::Window w = detail::realise(d.window);
  Case c;
  c.dtype = d.dtype;
  c.input = InputSpec{d.batch, d.groups * (d.depthwise ? 1 : d.in_per_group * d.multiple), w.spatial};
  ConvParams p;
  p.out_channels = d.groups * d.out_per_group * d.multiple;
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

}  // namespace

rc::Gen<Case> conv_like(bool fused, const Options& options) {
  return rc::gen::mapcat(sized(options), [fused](const Sized& s) {
    return realised(s, conv_draft(fused, s.o), [fused](const ConvDraft& d) { return realise_conv(d, fused); });
  });
}

}  // namespace detail

rc::Gen<Case> op_case(const Options& options, const ConvParams&) { return detail::conv_like(false, options); }

namespace detail {
WindowRef window_ref(ConvParams& p) { return WindowRef{p.kernel, p.stride, &p.dilation, p.padding, false}; }
ConvParams* conv_params(ConvParams& p) { return &p; }
}  // namespace detail

namespace detail {
std::vector<Rule> op_rules(const Case&, const ConvParams&) {
  return joined(joined(single_op_rules(), conv_rules()), {{"bias_tensor", bias_tensor}});
}
std::string_view bool_field(const ConvParams&) { return "bias"; }
}  // namespace detail

namespace detail {
std::vector<Quantity> sweep_quantities(const ConvParams&) { return conv_quantities(); }
void make_minimal(Case&, ConvParams& p) { p.out_channels = 1; }
}  // namespace detail

}  // namespace kc::gen
