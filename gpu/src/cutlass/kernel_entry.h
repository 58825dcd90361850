// One CUTLASS kernel of the engine as host code sees it: what it computes, its name, and
// three host functions compiled in the same translation unit as its device code
// (kernels_<dtype>.cu): CUTLASS's can_implement(), the workspace it asks for, and the
// launch. Plain C++17, so that the choice (kernel_catalog.cpp) and the engine's host code
// (cutlass_conv.cpp) include no CUTLASS header. Operands are channels-last device
// pointers (docs/architecture.md, "CUTLASS"), 16-byte aligned.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kc/gpu/cutlass_tiles.h"
#include "kc/gpu/implicit_gemm_problem.h"
#include "kc/status.h"

namespace kc::gpu::cutlass_engine {

enum class Element { kBf16, kF16, kF32 };

// fprop's epilogue: D = acc (+ bias), or D = relu(acc + bias) (the fused conv_bias_relu),
// both computed in f32 and rounded once; or D = acc in f32, unrounded (the fused op's
// backward recomputes its pre-activation from it: relu' as the forward saw it). Backward
// passes are always kLinear without bias.
enum class Epilogue { kLinear, kBiasRelu, kPreActivation };

// fprop: a = x NDHWC, b = w KTRSC, d = y NZPQK (f32 for kPreActivation), bias = b[K] or null.
// dgrad: a = dy NZPQK, b = w KTRSC, d = dx NDHWC.
// wgrad: a = dy NZPQK, b = x NDHWC, d = dw KTRSC in f32 (every dtype: summed in f32, the
//        engine rounds it to the storage dtype once, as it turns it channels-first).
struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;
  void* d = nullptr;
};

struct KernelEntry {
  std::string name;  // "fprop bf16 128x128x64, 3 stages"
  ConvPass pass = ConvPass::kFprop;
  Element element = Element::kF32;
  Epilogue epilogue = Epilogue::kLinear;
  int rank = 2;  // the problem's: 2 (ranks 1 and 2) or 3
  TileSize tile = TileSize::kLarge;
  int tile_m = 0, tile_n = 0;  // the thread block's GEMM tile (the tile rule counts its blocks)
  // can_implement(): nullptr where the kernel accepts p, else CUTLASS's status in words.
  const char* (*refusal)(const ImplicitGemmProblem& p) = nullptr;
  size_t (*workspace_bytes)(const ImplicitGemmProblem& p) = nullptr;
  // Queues the kernel on the launch stream (stream.h); workspace of workspace_bytes(p).
  Status (*run)(const ImplicitGemmProblem& p, const Operands& o, void* workspace) = nullptr;
};

// The kernels of each translation unit (kernels_bf16.cu, kernels_f16.cu, kernels_f32.cu).
std::vector<KernelEntry> kernels_bf16();
std::vector<KernelEntry> kernels_f16();
std::vector<KernelEntry> kernels_f32();

}  // namespace kc::gpu::cutlass_engine
