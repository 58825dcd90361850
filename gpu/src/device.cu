// Device query through the CUDA runtime; errors become unavailable(reason).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include "kc/gpu/device.h"
#include "kc/gpu/device_buffer.h"

namespace kc::gpu {

// The driver library the CUDA runtime loads: without it no CUDA call can succeed, and
// the runtime's own error ("driver version is insufficient") would mislead.
namespace {
bool driver_present() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}
}  // namespace

StatusOr<DeviceInfo> query_device() {
  if (!driver_present()) return unavailable("no NVIDIA driver (libcuda.so.1 not found)");
  note_cuda_initialised();
  DeviceInfo info;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    return unavailable(std::string("no usable CUDA device: ") + cudaGetErrorString(err));
  }
  if (count == 0) return unavailable("no CUDA device present");
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    return unavailable(std::string("cannot read device 0: ") + cudaGetErrorString(err));
  }
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.global_memory_bytes = static_cast<long long>(prop.totalGlobalMem);
  return info;
}

}  // namespace kc::gpu
