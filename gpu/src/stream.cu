// DeviceStream, StreamScope and the launch stream of the wrappers (stream.h), plus the
// two device properties a prepared op reports (L2 size, memory in use).
#include <cuda_runtime.h>

#include "dtype_traits.cuh"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/stream.h"

namespace kc::gpu {
namespace {
thread_local void* t_launch_stream = nullptr;
}  // namespace

namespace detail {
cudaStream_t launch_stream() { return static_cast<cudaStream_t>(t_launch_stream); }
}  // namespace detail

DeviceStream::~DeviceStream() {
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

DeviceStream& DeviceStream::operator=(DeviceStream&& o) noexcept {
  if (this != &o) {
    if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
    stream_ = o.stream_;
    o.stream_ = nullptr;
  }
  return *this;
}

StatusOr<DeviceStream> DeviceStream::create() {
  note_cuda_initialised();
  cudaStream_t s = nullptr;
  // Blocking (not cudaStreamNonBlocking): ordered with the synchronous copies and fills.
  KC_RETURN_IF_ERROR(detail::cuda_status(cudaStreamCreate(&s), "create stream"));
  DeviceStream d;
  d.stream_ = s;
  return StatusOr<DeviceStream>(std::move(d));
}

Status DeviceStream::synchronize(const char* what) const {
  return detail::cuda_status(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), what);
}

StreamScope::StreamScope(void* stream) : previous_(t_launch_stream) { t_launch_stream = stream; }
StreamScope::~StreamScope() { t_launch_stream = previous_; }

int64_t device_l2_bytes() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess) return 0;
  return bytes;
}

int64_t device_used_bytes() {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return static_cast<int64_t>(total - free);
}

}  // namespace kc::gpu
