// The engine's f32 kernels, on CUDA cores (SIMT FFMA: exact f32 products, no TF32), any
// channel count: per 2-D pass a large and a small tile, as for the 16-bit dtypes, and
// the 3-D passes in one tile each.
#include <string>
#include <vector>

#include "kernel_list.cuh"
#include "kernel_types.cuh"

namespace kc::gpu::cutlass_engine {

namespace {
// The kernel types of f32, as kernel_list.cuh names them (15, the pre-activation's shared).
struct SimtKernels {
  using F1 = types::FpropSimt<types::Linear<float, true>, 128, 128, 32, 64>;
  using F2 = types::FpropSimt<types::Linear<float, true>, 64, 64, 32, 32>;
  using R1 = types::FpropSimt<types::BiasRelu<float, true>, 128, 128, 32, 64>;
  using R2 = types::FpropSimt<types::BiasRelu<float, true>, 64, 64, 32, 32>;
  using D1 = types::DgradSimt<128, 128, 32, 64, types::kUnity, types::Swizzle>;
  using D2 = types::DgradSimt<64, 64, 32, 32, types::kUnity, types::Swizzle>;
  using S1 = types::DgradSimt<128, 128, 32, 64, types::kStrided, types::StridedSwizzle>;
  using S2 = types::DgradSimt<64, 64, 32, 32, types::kStrided, types::StridedSwizzle>;
  using W1 = types::WgradSimt<128, 128, 32, 64>;
  using W2 = types::WgradSimt<64, 64, 32, 32>;
  using F3d = types::Fprop3d<float, types::Simt, types::Linear<float, true>>;
  using R3d = types::Fprop3d<float, types::Simt, types::BiasRelu<float, true>>;
  using D3d = types::Dgrad3d<float, types::Simt, types::kOptimized, types::kUnity>;
  using S3d = types::Dgrad3d<float, types::Simt, types::kAnalytic, types::kStrided>;
  using W3d = types::Wgrad3d<float, types::Simt>;
  using Z1 = F1;  // y is f32 already: the pre-activation is fprop's own output
  using Z2 = F2;
  using Z3d = F3d;
};
}  // namespace

std::vector<KernelEntry> kernels_f32() { return kernel_list<SimtKernels>(Element::kF32, "f32 simt", ""); }

}  // namespace kc::gpu::cutlass_engine
