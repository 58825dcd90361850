// The trap zoo's allowance traps: backends that declare a numerics allowance (kc/numerics.h)
// and then err just outside it, so that the allowance cannot let a real bug through:
//   winograd_ten_times   declares Winograd F(4,3), errs by 10 times its error bound
//   ftz_flushes_normals  declares FTZ, flushes outputs below 2^-6 (normal numbers) to 0
//   skip_taps_drops_real declares that it skips zero-padding taps, and also drops the
//                        first input element of every row (an `i <= 0` for `i < 0`)
// Each is the zoo's correct conv (trap_conv.h) with the change applied to its forward.
#pragma once

#include "kc/numerics.h"
#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"
#include "trap_conv.h"

namespace kc::traps {

// What the trap's backend declares (the strict contract for every other bug).
Numerics trap_numerics(Bug bug);

// The forward of an allowance trap; any other bug: trap_conv_forward unchanged.
Status trap_numerics_forward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                             const Tensor* b, bool relu, Tensor& y);

}  // namespace kc::traps
