// The conv_bias_relu module's generator: the conv's, with a bias always.
#include "core/format.h"
#include "gen/invalid.h"
#include "gen/op_fields.h"
#include "gen/sweep_quantities.h"
#include "ops/conv/conv_gen.h"
#include "ops/op_module.h"

namespace kc::gen {

rc::Gen<Case> op_case(const Options& options, const ConvBiasReluParams&) { return detail::conv_like(true, options); }

namespace detail {
WindowRef window_ref(ConvBiasReluParams& p) { return window_ref(p.conv); }
ConvParams* conv_params(ConvBiasReluParams& p) { return &p.conv; }
}  // namespace detail

namespace detail {
std::vector<Rule> op_rules(const Case&, const ConvBiasReluParams&) { return joined(single_op_rules(), conv_rules()); }
std::string_view bool_field(const ConvBiasReluParams&) { return "bias"; }
}  // namespace detail

namespace detail {
std::vector<Quantity> sweep_quantities(const ConvBiasReluParams&) { return conv_quantities(); }
void make_minimal(Case&, ConvBiasReluParams& p) {
  p.conv.out_channels = 1;
  p.conv.bias = true;
}
}  // namespace detail

}  // namespace kc::gen
