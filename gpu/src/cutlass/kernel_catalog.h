// The CUTLASS kernels the engine can run and the choice among them per problem, made by
// the kernels' own can_implement() (host-only: it answers without a GPU, in any process).
// Per pass and dtype, the first kernel of the tile the tile rule wants that accepts the
// problem is chosen; where none does, the reason names the first refusal. Plain C++17 (nvcc's and host code share it).
#pragma once

#include <string>

#include "kc/gpu/cutlass_tiles.h"
#include "kc/gpu/implicit_gemm_problem.h"

namespace kc::gpu::cutlass_engine {

enum class Element { kBf16, kF16, kF32 };

struct Choice {
  bool chosen = false;
  std::string kernel;  // "fprop bf16 128x128x64, 3 stages" when chosen
  std::string why;     // when not: the first kernel's refusal, in CUTLASS's words with ours
};

// The tile the rule (kc/gpu/cutlass_tiles.h) wants for `sms` multiprocessors is tried
// first, the other where no kernel of that tile accepts the problem.
Choice choose_kernel(const ImplicitGemmProblem& p, Element e, ConvPass pass, int sms = kHopperSms);

}  // namespace kc::gpu::cutlass_engine
