// The op fields the generators edit (see op_fields.h), as each op's module gives them.
#include "gen/op_fields.h"

#include "ops/op_module.h"

namespace kc::gen::detail {

WindowRef window_of(Case& c) {
  return std::visit([](auto& p) { return window_ref(p); }, c.op);
}

ConvParams* conv_of(Case& c) {
  return std::visit([](auto& p) { return conv_params(p); }, c.op);
}

}  // namespace kc::gen::detail
