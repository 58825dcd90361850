// Device memory for the GPU backends: an owning buffer with guard bands, device-memory
// accounting (current and peak bytes, process-wide), and CUDA-event timing. No CUDA type
// appears here; errors are Status values (out of memory is resource_exhausted).
//
// Guard bands: every buffer has kGuardBytes before and after its data, filled with a
// pattern on allocation. check_guards() reads them back: a kernel that writes outside
// its tensor is reported by name instead of corrupting a neighbour silently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kc/status.h"

namespace kc::gpu {

inline constexpr int64_t kGuardBytes = 256;  // keeps data 256-byte aligned
inline constexpr unsigned char kGuardPattern = 0xA5;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // `bytes` of data (0 allowed) between two guard bands. The data is not initialised.
  static StatusOr<DeviceBuffer> allocate(int64_t bytes, std::string name);

  void* data() { return data_; }
  const void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  explicit operator bool() const { return base_ != nullptr; }

  Status upload(const void* host, int64_t bytes);    // synchronous
  Status download(void* host, int64_t bytes) const;  // synchronous
  Status fill(unsigned char byte);                   // every data byte (0xFF: NaN poison)
  Status check_guards() const;                       // internal error naming the buffer

 private:
  void release();
  void* base_ = nullptr;
  void* data_ = nullptr;
  int64_t bytes_ = 0;
  std::string name_;
};

// Grow-only scratch: reallocates only when a larger size is asked for.
Status ensure_size(DeviceBuffer& buffer, int64_t bytes, const std::string& name);

struct MemoryStats {
  int64_t current_bytes = 0;  // device bytes held by live DeviceBuffers (guards included)
  int64_t peak_bytes = 0;     // the most held at once since the last reset
};
MemoryStats device_memory_stats();
void reset_device_memory_peak();  // peak := current

// Waits for the device; reports an asynchronous fault of earlier launches as `what`.
Status device_synchronize(const std::string& what);

// Elapsed device time between start() and stop() through CUDA events recorded on
// `stream` (a cudaStream_t; null: the default stream).
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  Status start(void* stream = nullptr);
  Status stop(void* stream = nullptr);
  StatusOr<double> seconds() const;  // waits for the stop event

 private:
  struct Events;
  std::unique_ptr<Events> events_;
};

// Whether this process has initialised CUDA through kc_gpu (see device.h: the device
// probe must then run in-process, since a forked child cannot use CUDA).
bool cuda_initialised_here();
void note_cuda_initialised();

}  // namespace kc::gpu
