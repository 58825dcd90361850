// A small case shared by the tests of the shape, forward and backward checks and of the
// tolerance model: a strided SAME conv in f32, with a bias unless asked otherwise.
#pragma once

#include "kc/case.h"
#include "support/case_builders.h"

namespace kc::test {

inline Case small_conv(bool bias = true) {
  ConvSpec s{.batch = 2,
             .channels = 3,
             .out_channels = 4,
             .spatial = {7, 6},
             .kernel = {3, 3},
             .stride = {2, 1},
             .padding = pad_kind(PadKind::kSame),
             .bias = bias,
             .dtype = DType::kF32};
  Case c = conv_case(s);
  c.data.seed = 3;
  c.checks = {"shape", "forward", "backward"};
  return c;
}

}  // namespace kc::test
