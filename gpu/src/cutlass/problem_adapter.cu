// ImplicitGemmProblem -> cutlass::conv::Conv{2,3}dProblemSize, always through the
// constructors that take the output size and the mode explicitly (the two traps of
// kc/gpu/cutlass_problem.h).
#include "problem_adapter.h"
#include "problem_size.cuh"

namespace kc::gpu::cutlass_engine {
ImplicitGemmProblem as_cutlass_sees_it(const ImplicitGemmProblem& p) {
  ImplicitGemmProblem r = p;
  if (p.rank == 3) {
    const cutlass::conv::Conv3dProblemSize q = problem_3d(p);
    r.n = q.N, r.c = q.C, r.k = q.K, r.groups = q.groups;
    r.in = {q.D, q.H, q.W}, r.filter = {q.T, q.R, q.S}, r.out = {q.Z, q.P, q.Q};
    r.pad = {q.pad_d, q.pad_h, q.pad_w}, r.stride = {q.stride_d, q.stride_h, q.stride_w};
    r.dilation = {q.dilation_d, q.dilation_h, q.dilation_w};
    r.cross_correlation = q.mode == kMode;
    return r;
  }
  const cutlass::conv::Conv2dProblemSize q = problem_2d(p);
  r.n = q.N, r.c = q.C, r.k = q.K, r.groups = q.groups;
  r.in = {1, q.H, q.W}, r.filter = {1, q.R, q.S}, r.out = {1, q.P, q.Q};
  r.pad = {0, q.pad_h, q.pad_w}, r.stride = {1, q.stride_h, q.stride_w}, r.dilation = {1, q.dilation_h, q.dilation_w};
  r.cross_correlation = q.mode == kMode;
  return r;
}

int cutlass_computed_height(const ImplicitGemmProblem& p) {
  // Symmetric padding as the constructor takes it: {pad_h, upper_pad_h, pad_w, upper_pad_w}.
  const cutlass::conv::Conv2dProblemSize q({p.n, p.in[1], p.in[2], p.c}, {p.k, p.filter[1], p.filter[2], p.c},
                                           {p.pad[1], p.pad[1], p.pad[2], p.pad[2]}, {p.stride[1], p.stride[2]},
                                           {p.dilation[1], p.dilation[2]}, kMode, 1, p.groups);
  return q.P;
}

}  // namespace kc::gpu::cutlass_engine
