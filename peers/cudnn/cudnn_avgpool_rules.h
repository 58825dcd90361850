// What the cudnn peer's average pooling can run as the contract defines it, apart from
// the engine (cudnn_engine.cpp) that runs it: whether cuDNN's own symmetric padding
// serves, and the cases it refuses (a divisor, extra ceil_mode windows, uncounted
// asymmetric padding). Host code only.
#pragma once

#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc::gpu {

bool cudnn_pads_avgpool(const AvgPoolGeometry& g);
Status avgpool_supports(const Case& c, const AvgPoolParams& p);

}  // namespace kc::gpu
