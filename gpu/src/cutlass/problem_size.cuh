// ImplicitGemmProblem as CUTLASS's own problem types, for the engine's translation units
// only (they include CUTLASS): always through the constructors that take the output size
// and the mode explicitly, the two traps of kc/gpu/cutlass_problem.h.
#pragma once

#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/conv/conv3d_problem_size.h>

#include "kc/gpu/implicit_gemm_problem.h"

namespace kc::gpu::cutlass_engine {

constexpr cutlass::conv::Mode kMode = cutlass::conv::Mode::kCrossCorrelation;

inline cutlass::conv::Conv2dProblemSize problem_2d(const ImplicitGemmProblem& p) {
  return cutlass::conv::Conv2dProblemSize(p.n, p.in[1], p.in[2], p.c, p.k, p.filter[1], p.filter[2], p.out[1], p.out[2],
                                          p.pad[1], p.pad[2], p.stride[1], p.stride[2], p.dilation[1], p.dilation[2],
                                          kMode, 1, p.groups);
}

inline cutlass::conv::Conv3dProblemSize problem_3d(const ImplicitGemmProblem& p) {
  return cutlass::conv::Conv3dProblemSize(p.n, p.in[0], p.in[1], p.in[2], p.c, p.k, p.filter[0], p.filter[1],
                                          p.filter[2], p.out[0], p.out[1], p.out[2], p.pad[0], p.pad[1], p.pad[2],
                                          p.stride[0], p.stride[1], p.stride[2], p.dilation[0], p.dilation[1],
                                          p.dilation[2], kMode, 1, p.groups);
}

}  // namespace kc::gpu::cutlass_engine
