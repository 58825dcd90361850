// The three host functions of a KernelEntry (kernel_entry.h) for one CUTLASS
// ImplicitGemmConvolution type: can_implement(), the workspace, and the launch with its
// full Arguments (tensor refs over the channels-last operands, the epilogue's alpha and
// beta, split-K serial with one slice: each output written once, no semaphore). Included
// by the kernels_<dtype>.cu translation units only.
#pragma once

#include <cutlass/conv/convolution.h>
#include <cutlass/cutlass.h>
#include <cutlass/tensor_ref.h>

#include <cstdint>
#include <string>

#include "../dtype_traits.cuh"
#include "kernel_entry.h"
#include "problem_size.cuh"

namespace kc::gpu::cutlass_engine {

template <typename Conv>
auto problem_of(const ImplicitGemmProblem& p) {
  if constexpr (Conv::kConvDim == 3) {
    return problem_3d(p);
  } else {
    return problem_2d(p);
  }
}

template <typename Conv>
typename Conv::Arguments arguments(const ImplicitGemmProblem& p, const Operands& o) {
  constexpr cutlass::conv::Operator kOp = Conv::kConvolutionalOperator;
  using A = typename Conv::ElementA;
  using B = typename Conv::ElementB;
  using C = typename Conv::ElementC;
  using RefA = cutlass::TensorRef<A, typename Conv::LayoutA>;
  using RefB = cutlass::TensorRef<B, typename Conv::LayoutB>;
  using LayoutC = typename Conv::LayoutC;
  using RefC = cutlass::TensorRef<C, LayoutC>;
  const auto ps = problem_of<Conv>(p);
  const RefA a(static_cast<A*>(const_cast<void*>(o.a)),
               Conv::LayoutA::packed(cutlass::conv::implicit_gemm_tensor_a_extent(kOp, ps)));
  const RefB b(static_cast<B*>(const_cast<void*>(o.b)),
               Conv::LayoutB::packed(cutlass::conv::implicit_gemm_tensor_b_extent(kOp, ps)));
  const RefC d(static_cast<C*>(o.d), LayoutC::packed(cutlass::conv::implicit_gemm_tensor_c_extent(kOp, ps)));
  // The bias as the epilogue's source C with every stride 0: row (output pixel) m reads
  // bias[k] for column k. beta = 0 without a bias: the source is then never read.
  const RefC bias(static_cast<C*>(const_cast<void*>(o.bias)), LayoutC(typename LayoutC::Stride(0)));
  using Params = typename Conv::EpilogueOutputOp::Params;
  const Params out = o.bias != nullptr ? Params(1.0f, 1.0f) : Params(1.0f, 0.0f);
  return typename Conv::Arguments(ps, a, b, o.bias != nullptr ? bias : d, d, out, cutlass::conv::SplitKMode::kSerial);
}

// Both read the whole Arguments (split_k_mode included: the one-argument constructor
// leaves it unset), built here without operands.
template <typename Conv>
const char* refusal(const ImplicitGemmProblem& p) {
  const cutlass::Status s = Conv::can_implement(arguments<Conv>(p, Operands{}));
  return s == cutlass::Status::kSuccess ? nullptr : cutlass::cutlassGetStatusString(s);
}

template <typename Conv>
size_t workspace_bytes(const ImplicitGemmProblem& p) {
  return Conv::get_workspace_size(arguments<Conv>(p, Operands{}));
}

template <typename Conv>
Status run(const ImplicitGemmProblem& p, const Operands& o, void* workspace) {
  const typename Conv::Arguments args = arguments<Conv>(p, o);
  cudaStream_t stream = detail::launch_stream();
  auto failed = [](const char* step, cutlass::Status s) {
    return internal_error(std::string("CUTLASS ") + step + ": " + cutlass::cutlassGetStatusString(s));
  };
  Conv conv;
  cutlass::Status s = conv.can_implement(args);
  if (s != cutlass::Status::kSuccess) return failed("can_implement at launch", s);
  // can_implement checks channel counts, not pointers: the kernels' 128-bit accesses
  // (the bias's included) need 16-byte alignment.
  for (const void* ptr : {o.a, o.b, o.bias, static_cast<const void*>(o.d)}) {
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
      return internal_error("CUTLASS conv: an operand not 16-byte aligned");
  }
  // CUTLASS's run() reports any pending error as its own launch's: say an earlier one apart.
  KC_RETURN_IF_ERROR(detail::cuda_status(cudaGetLastError(), "before the CUTLASS conv"));
  s = conv.initialize(args, workspace, stream);
  if (s != cutlass::Status::kSuccess) return failed("initialize", s);
  s = conv.run(stream);
  if (s != cutlass::Status::kSuccess) return failed("launch", s);
  return detail::launch_status("CUTLASS conv");
}

template <typename Conv>
std::string kernel_name(const std::string& what, const char* suffix = "") {
  using T = typename Conv::ThreadblockShape;
  return what + " " + std::to_string(T::kM) + "x" + std::to_string(T::kN) + "x" + std::to_string(T::kK) + ", " +
         std::to_string(Conv::kStages) + " stages" + suffix;
}

template <typename Conv>
KernelEntry entry(std::string name, ConvPass pass, Element e, TileSize tile, Epilogue epi = Epilogue::kLinear) {
  KernelEntry k;
  k.name = std::move(name);
  k.pass = pass;
  k.element = e;
  k.epilogue = epi;
  k.rank = Conv::kConvDim == 3 ? 3 : 2;
  k.tile = tile;
  k.tile_m = Conv::ThreadblockShape::kM;
  k.tile_n = Conv::ThreadblockShape::kN;
  k.refusal = &refusal<Conv>;
  k.workspace_bytes = &workspace_bytes<Conv>;
  k.run = &run<Conv>;
  return k;
}

}  // namespace kc::gpu::cutlass_engine
