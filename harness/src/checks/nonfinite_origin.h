// Where a wrong non-finite y of a convolution came from, for the forward check's
// message: a NaN pre-activation the fused relu turned into 0 (the contract keeps NaN),
// or a NaN or infinity where the output's window (every input channel of its group, every
// tap inside the input) holds only finite values, so that the kernel read past the
// window (a lane of the next pixel, a stale buffer) rather than met the padding; for a
// backend that declares a transform, one that its tile spread from a neighbour's input.
// Invariant: reads the case's tensors and the outputs only; never changes a verdict.
#pragma once

#include <string>

#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::checks {

// "" when nothing applies, else "; "-terminated sentences for the check's message.
std::string nonfinite_origin(const ConvGeometry& g, bool relu, bool transform, const Tensor& x, const Tensor& w,
                             const Tensor& cand, const Tensor& ref);

}  // namespace kc::checks
