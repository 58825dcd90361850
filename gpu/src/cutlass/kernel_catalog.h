// The engine's choice of a CUTLASS kernel per problem, made by the kernels' own
// can_implement() (host-only: it answers without a GPU, in any process). Among the
// kernels of the problem's pass, dtype, epilogue and rank, the tile the tile rule wants
// (kc/gpu/cutlass_tiles.h, from the catalog's large tile) is tried first, then the
// other; where none accepts, the reason says why in our words where a known constraint
// explains it, with CUTLASS's status after. Plain C++17: host code includes it.
#pragma once

#include <string>
#include <vector>

#include "kernel_entry.h"

namespace kc::gpu::cutlass_engine {

struct Choice {
  const KernelEntry* kernel = nullptr;  // null: none accepts (the direct kernels run)
  std::string why;                      // when none: "channels 3 not a multiple of 8 (...)"
  bool chosen() const { return kernel != nullptr; }
  std::string name() const { return kernel != nullptr ? kernel->name : std::string(); }
};

// Every kernel of the engine, in catalog order (bf16, f16, f32).
const std::vector<KernelEntry>& all_kernels();

Choice choose_kernel(const ImplicitGemmProblem& p, Element e, ConvPass pass, Epilogue epi = Epilogue::kLinear,
                     int sms = kHopperSms);

// Our words for the first CUTLASS constraint p breaks for this pass and dtype (channel
// alignment, groups, strided and dilated dgrad, filters past 32 taps, tensors of 2^31
// bytes); empty where none of those applies.
std::string known_refusal(const ImplicitGemmProblem& p, Element e, ConvPass pass);

}  // namespace kc::gpu::cutlass_engine
