// Device query for the GPU backends. Any error from the CUDA runtime means the backend
// is unavailable, with the runtime's reason; nothing here aborts without a device.
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
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;
};

// The first CUDA device, or unavailable("...reason...") when there is none.
StatusOr<DeviceInfo> query_device();

}  // namespace kc::gpu
