// The engine's f32 kernels, on CUDA cores (SIMT FFMA: exact f32 products, no TF32), any
// channel count: per 2-D pass a large and a small tile, as for the 16-bit dtypes, and
// the 3-D passes in one tile each.
#include <string>
#include <vector>

#include "kernel_launch.cuh"
#include "kernel_types.cuh"

namespace kc::gpu::cutlass_engine {

std::vector<KernelEntry> kernels_f32() {
  using namespace types;
  constexpr TileSize L = TileSize::kLarge, S = TileSize::kSmall;
  constexpr ConvPass F = ConvPass::kFprop, D = ConvPass::kDgrad, W = ConvPass::kWgrad;
  constexpr Epilogue R = Epilogue::kBiasRelu;
  constexpr Element e = Element::kF32;
  using F1 = FpropSimt<Linear<float, true>, 128, 128, 32, 64>;
  using F2 = FpropSimt<Linear<float, true>, 64, 64, 32, 32>;
  using F3 = FpropSimt<BiasRelu<float, true>, 128, 128, 32, 64>;
  using F4 = FpropSimt<BiasRelu<float, true>, 64, 64, 32, 32>;
  using D1 = DgradSimt<128, 128, 32, 64, kUnity, Swizzle>;
  using D2 = DgradSimt<64, 64, 32, 32, kUnity, Swizzle>;
  using D3 = DgradSimt<128, 128, 32, 64, kStrided, StridedSwizzle>;
  using D4 = DgradSimt<64, 64, 32, 32, kStrided, StridedSwizzle>;
  using W1 = WgradSimt<128, 128, 32, 64>;
  using W2 = WgradSimt<64, 64, 32, 32>;
  using F3d = Fprop3d<float, Simt, Linear<float, true>>;
  using R3d = Fprop3d<float, Simt, BiasRelu<float, true>>;
  using D3d = Dgrad3d<float, Simt, kOptimized, kUnity>;
  using S3d = Dgrad3d<float, Simt, kAnalytic, kStrided>;
  using W3d = Wgrad3d<float, Simt>;
  const std::string f = "fprop f32 simt", d = "dgrad f32 simt", w = "wgrad f32 simt";
  return {
      entry<F1>(kernel_name<F1>(f), F, e, L),
      entry<F2>(kernel_name<F2>(f), F, e, S),
      entry<F3>(kernel_name<F3>(f + " + bias + relu"), F, e, L, R),
      entry<F4>(kernel_name<F4>(f + " + bias + relu"), F, e, S, R),
      entry<D1>(kernel_name<D1>(d + " unit stride"), D, e, L),
      entry<D2>(kernel_name<D2>(d + " unit stride"), D, e, S),
      entry<D3>(kernel_name<D3>(d + " strided"), D, e, L),
      entry<D4>(kernel_name<D4>(d + " strided"), D, e, S),
      entry<W1>(kernel_name<W1>(w), W, e, L),
      entry<W2>(kernel_name<W2>(w), W, e, S),
      entry<F3d>(kernel_name<F3d>(f + " 3-D"), F, e, L),
      entry<R3d>(kernel_name<R3d>(f + " 3-D + bias + relu"), F, e, L, R),
      entry<D3d>(kernel_name<D3d>(d + " 3-D unit stride"), D, e, L),
      entry<S3d>(kernel_name<S3d>(d + " 3-D strided, analytic"), D, e, L),
      entry<W3d>(kernel_name<W3d>(w + " 3-D"), W, e, L),
  };
}

}  // namespace kc::gpu::cutlass_engine
