// The CUTLASS kernels the engine can run and the choice among them per problem, made by
// the kernels' own can_implement() (host-only: it answers without a GPU, in any process).
// The first kernel of a pass and dtype that accepts the problem is chosen; where none
// does, the reason names the first refusal. Plain C++17 (nvcc's and host code share it).
#pragma once

#include <string>

#include "kc/gpu/implicit_gemm_problem.h"

namespace kc::gpu::cutlass_engine {

enum class Pass { kFprop, kDgrad, kWgrad };
enum class Element { kBf16, kF16, kF32 };

struct Choice {
  bool chosen = false;
  std::string kernel;  // "fprop bf16 128x128x64, 3 stages" when chosen
  std::string why;     // when not: the first kernel's refusal, in CUTLASS's words with ours
};

Choice choose_kernel(const ImplicitGemmProblem& p, Element e, Pass pass);

}  // namespace kc::gpu::cutlass_engine
