// Padding of an input by lo/hi per spatial dim in one of the four modes, and its
// adjoint (gradients of padded positions flow back to the elements they copy).
//   zeros:     xp[p] = x[p - lo] inside, 0 outside
//   reflect:   mirror about the edge, edge not repeated   (needs pad < in)
//   replicate: clamp to the edge element
//   circular:  wrap around                                (needs pad <= in)
#pragma once

#include <cstdint>

#include "kc/case.h"
#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::ref {

// Index in [0, in) of the input element that padded coordinate p (0 <= p < lo+in+hi)
// copies, or -1 where the padded value is zero.
int64_t pad_source(int64_t p, const DimGeometry& d, PaddingMode mode);

// [N, C, in...] -> [N, C, (lo+in+hi)...]
Tensor pad(const Tensor& x, const SpatialGeometry& g, PaddingMode mode);

// Adjoint of pad: [N, C, padded...] -> [N, C, in...], dx[src] += dxp[p].
Tensor pad_adjoint(const Tensor& dxp, const SpatialGeometry& g, PaddingMode mode);

}  // namespace kc::ref
