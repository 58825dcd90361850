// The conv module's generator for conv_bias_relu, which draws a conv with a bias.
#pragma once

#include <rapidcheck.h>

#include "gen/gen.h"
#include "kc/case.h"

namespace kc::gen::detail {

// A conv case (`fused`: a conv_bias_relu one) of the options' sizes.
rc::Gen<Case> conv_like(bool fused, const Options& options);

}  // namespace kc::gen::detail
