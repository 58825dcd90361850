// launch_device_copy (kernels.h): the copy engine's device-to-device copy, queued on the
// launch stream; the bandwidth ceiling times it (gpu_ceilings.cpp).
#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"

namespace kc::gpu {

Status launch_device_copy(void* dst, const void* src, int64_t bytes) {
  return detail::cuda_status(
      cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, detail::launch_stream()),
      "device-to-device copy");
}

}  // namespace kc::gpu
