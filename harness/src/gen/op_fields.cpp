// The op fields the generators edit (see op_fields.h): one lambda per op.
#include "gen/op_fields.h"

#include "kc/overloaded.h"

namespace kc::gen::detail {

WindowRef window_of(Case& c) {
  auto of_conv = [](ConvParams& p) { return WindowRef{p.kernel, p.stride, &p.dilation, p.padding, false}; };
  return std::visit(
      Overloaded{[&](ConvParams& p) { return of_conv(p); }, [&](ConvBiasReluParams& p) { return of_conv(p.conv); },
                 [&](StackParams& p) { return of_conv(p.conv); },
                 [](MaxPoolParams& p) {
                   return WindowRef{p.kernel, p.stride, &p.dilation, p.padding, true};
                 },
                 [](AvgPoolParams& p) {
                   return WindowRef{p.kernel, p.stride, nullptr, p.padding, true};
                 }},
      c.op);
}

ConvParams* conv_of(Case& c) {
  return std::visit(
      Overloaded{[](ConvParams& p) { return &p; }, [](ConvBiasReluParams& p) { return &p.conv; },
                 [](StackParams& p) { return &p.conv; }, [](MaxPoolParams&) -> ConvParams* { return nullptr; },
                 [](AvgPoolParams&) -> ConvParams* { return nullptr; }},
      c.op);
}

}  // namespace kc::gen::detail
