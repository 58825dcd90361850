// A convolution as the problem CUTLASS's implicit-GEMM kernels take (Conv2dProblemSize,
// Conv3dProblemSize): activations NHWC / NDHWC, filters KRSC / KTRSC. Plain C++, so that
// the mapping is tested without CUTLASS's headers; gpu/src/cutlass/ builds CUTLASS's own
// problem from it. Invariants (docs/architecture.md, "CUTLASS"): always cross-correlation
// (the problem's default mode flips the filter); ranks 1 and 2 are 2-D problems (rank 1
// with H = R = P = 1), rank 3 a 3-D one; each dim's padding is its low side, and the output
// size is always given (padding on the high side follows from it, so asymmetric padding
// needs no second value; CUTLASS's constructor that computes it is wrong for dilated
// filters: P = 55, not 56, for a 3x3 filter with dilation 2 on 56 with padding 2).
#pragma once

#include "kc/gpu/implicit_gemm_problem.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc::gpu {

// The problem for a zero-padded convolution; an error naming why CUTLASS's problem cannot
// hold it (another padding mode, a size past int).
StatusOr<ImplicitGemmProblem> implicit_gemm_problem(const ConvGeometry& g);

}  // namespace kc::gpu
