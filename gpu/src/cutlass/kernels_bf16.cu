// The engine's bf16 kernels (tensor_op_kernels.cuh): their device code is compiled here,
// one translation unit per dtype to keep each nvcc within its memory budget.
#include "tensor_op_kernels.cuh"

namespace kc::gpu::cutlass_engine {
std::vector<KernelEntry> kernels_bf16() { return tensor_op_kernels<cutlass::bfloat16_t>(Element::kBf16, "bf16"); }
}  // namespace kc::gpu::cutlass_engine
