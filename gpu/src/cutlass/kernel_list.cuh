// The 18 kernels of one dtype as catalog entries (kernel_entry.h), named from their
// types: K holds the types (tensor_op_kernels.cuh for 16-bit, kernels_f32.cu for f32):
// 2-D F1/F2 fprop, R1/R2 fprop + bias + relu, Z1/Z2 fprop into f32 pre-activations,
// D1/D2 unit-stride dgrad, S1/S2 strided dgrad, W1/W2 wgrad (large tile first), and the
// 3-D F3d, R3d, Z3d, D3d, S3d, W3d in one tile each.
#pragma once

#include <string>
#include <vector>

#include "kernel_launch.cuh"

namespace kc::gpu::cutlass_engine {

template <class K>
std::vector<KernelEntry> kernel_list(Element e, const std::string& dt, const char* wgrad_suffix) {
  constexpr TileSize L = TileSize::kLarge, S = TileSize::kSmall;
  constexpr ConvPass F = ConvPass::kFprop, D = ConvPass::kDgrad, W = ConvPass::kWgrad;
  constexpr Epilogue R = Epilogue::kBiasRelu, Z = Epilogue::kPreActivation;
  const std::string f = "fprop " + dt, r = f + " + bias + relu", z = f + " -> f32 pre-activation";
  const std::string d = "dgrad " + dt, w = "wgrad " + dt;
  return {
      entry<typename K::F1>(kernel_name<typename K::F1>(f), F, e, L),
      entry<typename K::F2>(kernel_name<typename K::F2>(f), F, e, S),
      entry<typename K::R1>(kernel_name<typename K::R1>(r), F, e, L, R),
      entry<typename K::R2>(kernel_name<typename K::R2>(r), F, e, S, R),
      entry<typename K::Z1>(kernel_name<typename K::Z1>(z), F, e, L, Z),
      entry<typename K::Z2>(kernel_name<typename K::Z2>(z), F, e, S, Z),
      entry<typename K::D1>(kernel_name<typename K::D1>(d + " unit stride"), D, e, L),
      entry<typename K::D2>(kernel_name<typename K::D2>(d + " unit stride"), D, e, S),
      entry<typename K::S1>(kernel_name<typename K::S1>(d + " strided"), D, e, L),
      entry<typename K::S2>(kernel_name<typename K::S2>(d + " strided"), D, e, S),
      entry<typename K::W1>(kernel_name<typename K::W1>(w, wgrad_suffix), W, e, L),
      entry<typename K::W2>(kernel_name<typename K::W2>(w, wgrad_suffix), W, e, S),
      entry<typename K::F3d>(kernel_name<typename K::F3d>(f + " 3-D"), F, e, L),
      entry<typename K::R3d>(kernel_name<typename K::R3d>(f + " 3-D + bias + relu"), F, e, L, R),
      entry<typename K::Z3d>(kernel_name<typename K::Z3d>(f + " 3-D -> f32 pre-activation"), F, e, L, Z),
      entry<typename K::D3d>(kernel_name<typename K::D3d>(d + " 3-D unit stride"), D, e, L),
      entry<typename K::S3d>(kernel_name<typename K::S3d>(d + " 3-D strided, analytic"), D, e, L),
      entry<typename K::W3d>(kernel_name<typename K::W3d>(w + " 3-D", wgrad_suffix), W, e, L),
  };
}

}  // namespace kc::gpu::cutlass_engine
