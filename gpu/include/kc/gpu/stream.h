// The stream the GPU backends launch on. A PreparedOp owns a DeviceStream and runs its
// op inside a StreamScope, so every launch wrapper (kernels.h) queues on that stream
// instead of the default one; outside any scope launches go to the default stream, as
// the host calls of the backends always did. No CUDA type appears here.
//
// Invariant: a DeviceStream is a blocking stream (it orders with the legacy default
// stream), so the synchronous uploads, fills and downloads of DeviceBuffer stay ordered
// with the kernels queued on it.
#pragma once

#include <memory>

#include "kc/status.h"

namespace kc::gpu {

class DeviceStream {
 public:
  DeviceStream() = default;
  ~DeviceStream();
  DeviceStream(DeviceStream&& o) noexcept : stream_(o.stream_) { o.stream_ = nullptr; }
  DeviceStream& operator=(DeviceStream&& o) noexcept;
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  static StatusOr<DeviceStream> create();
  void* handle() const { return stream_; }  // a cudaStream_t
  Status synchronize(const char* what) const;

 private:
  void* stream_ = nullptr;
};

// Launches of this thread go to `stream` (a cudaStream_t, null: the default stream)
// while the scope lives; scopes nest.
class StreamScope {
 public:
  explicit StreamScope(void* stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  void* previous_;
};

// The device's L2 cache in bytes (0 when it cannot be read).
int64_t device_l2_bytes();
// Device memory in use on the whole device (cudaMemGetInfo: total - free), or -1.
int64_t device_used_bytes();

}  // namespace kc::gpu
