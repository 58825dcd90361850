// CUTLASS's own problem built from ImplicitGemmProblem (problem_adapter.cu, the only
// translation units that include CUTLASS's conv headers so far), read back into the plain
// struct so that host tests can check what CUTLASS is given without its headers.
#pragma once

#include "kc/gpu/implicit_gemm_problem.h"

namespace kc::gpu::cutlass_engine {

// The problem as cutlass::conv::Conv2dProblemSize or Conv3dProblemSize holds it, every
// field read back (mode included): what a kernel would be launched with.
ImplicitGemmProblem as_cutlass_sees_it(const ImplicitGemmProblem& p);

// The output height CUTLASS's own constructor computes for p's sizes (the constructor
// the mapping never uses; kept to show why: it is wrong for dilated filters).
int cutlass_computed_height(const ImplicitGemmProblem& p);

}  // namespace kc::gpu::cutlass_engine
