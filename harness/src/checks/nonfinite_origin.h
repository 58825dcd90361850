// Where a wrong non-finite y of a convolution came from, for the forward check's
// message: a NaN pre-activation the fused relu turned into 0 (the contract keeps NaN),
// a -inf one it turned into NaN (0 x -inf: relu written as a negative slope of 0),
// or a NaN or infinity where the output's window (every input channel of its group, every
// tap inside the input) holds only finite values, so that the kernel read past the
// window (a lane of the next pixel, a stale buffer) rather than met the padding; for a
// backend that declares a transform, one that its tile spread from a neighbour's input.
// Outputs whose finite terms may overflow the accumulator (judge/tolerance.h) are no
// evidence of anything and are passed over.
// Invariant: reads the case's tensors and the outputs only; never changes a verdict.
#pragma once

#include <string>

#include "checks/checks.h"

namespace kc::checks {

// "" when nothing applies, else "; "-terminated sentences for the check's message.
std::string nonfinite_origin(const CheckContext& ctx, const ConvGeometry& g);

}  // namespace kc::checks
