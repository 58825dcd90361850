// Internal to the generators: the fields of a case's op that an edit reaches whatever
// the op: its window (kernel, stride, dilation, padding) and a conv's own fields (a
// stack's: its layer conv). The invalid-case rules break them; the boundary sweep sets
// them.
#pragma once

#include "kc/case.h"

namespace kc::gen::detail {

// The op's window fields; dilation is null for an average pool, which has none.
struct WindowRef {
  Dims& kernel;
  Dims& stride;
  Dims* dilation;
  PadSpec& padding;
  bool pool;  // stride defaults to the kernel
};
WindowRef window_of(Case& c);

// The conv of conv, conv_bias_relu and a stack's layer; null for a pool.
ConvParams* conv_of(Case& c);

}  // namespace kc::gen::detail
