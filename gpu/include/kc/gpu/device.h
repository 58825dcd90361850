// Device query for the GPU backends. Any error from the CUDA runtime means the backend
// is unavailable, with the runtime's reason; nothing here aborts without a device.
//
// Fork safety (docs/performance.md, "GPU"): a CUDA context does not survive fork, and kcheck forks
// its workers from a parent that must never initialise CUDA. probe_device() therefore
// asks in a short-lived child process (unless this process already uses CUDA), so a
// parent can say "cuda: unavailable (reason)" and still fork workers that use the GPU.
#pragma once

#include <string>

#include "kc/status.h"

namespace kc::gpu {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  long long global_memory_bytes = 0;
  int driver_version = 0;  // e.g. 13000
  int runtime_version = 0;
};

// The first CUDA device, or unavailable("...reason...") when there is none. Initialises
// CUDA in the calling process.
StatusOr<DeviceInfo> query_device();

// query_device() run in a forked child (in-process when this process already initialised
// CUDA), plus the check that the device can run this build's code (compute capability at
// least kMinComputeCapability). Cached for the life of the process.
StatusOr<DeviceInfo> probe_device();

// The lowest architecture this build has code for (CMAKE_CUDA_ARCHITECTURES), e.g. 90.
int min_compute_capability();

// "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB, driver 13000, runtime 13000)".
std::string describe(const DeviceInfo& info);

}  // namespace kc::gpu
