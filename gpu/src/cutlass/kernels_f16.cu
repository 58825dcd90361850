// The engine's f16 kernels (tensor_op_kernels.cuh): their device code is compiled here,
// one translation unit per dtype to keep each nvcc within its memory budget.
#include "tensor_op_kernels.cuh"

namespace kc::gpu::cutlass_engine {
std::vector<KernelEntry> kernels_f16() { return tensor_op_kernels<cutlass::half_t>(Element::kF16, "f16"); }
}  // namespace kc::gpu::cutlass_engine
