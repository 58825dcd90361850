// DeviceBuffer, memory accounting and event timing (device_buffer.h) over the CUDA
// runtime. Plain cudaMalloc (never managed memory); every call's error is a Status.
#include <cuda_runtime.h>

#include <atomic>
#include <vector>

#include "dtype_traits.cuh"
#include "kc/gpu/device_buffer.h"

namespace kc::gpu {
namespace {

std::atomic<int64_t> g_current{0};
std::atomic<int64_t> g_peak{0};
std::atomic<bool> g_initialised{false};

void account(int64_t delta) {
  const int64_t now = g_current.fetch_add(delta) + delta;
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

bool cuda_initialised_here() { return g_initialised.load(); }
void note_cuda_initialised() { g_initialised.store(true); }

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : base_(o.base_), data_(o.data_), bytes_(o.bytes_), name_(std::move(o.name_)) {
  o.base_ = o.data_ = nullptr;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    base_ = o.base_;
    data_ = o.data_;
    bytes_ = o.bytes_;
    name_ = std::move(o.name_);
    o.base_ = o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::release() {
  if (base_ == nullptr) return;
  cudaFree(base_);  // an error here (a sticky fault) was already reported by the op
  account(-(bytes_ + 2 * kGuardBytes));
  base_ = data_ = nullptr;
  bytes_ = 0;
}

StatusOr<DeviceBuffer> DeviceBuffer::allocate(int64_t bytes, std::string name) {
  note_cuda_initialised();
  DeviceBuffer b;
  const int64_t total = bytes + 2 * kGuardBytes;
  const cudaError_t e = cudaMalloc(&b.base_, static_cast<size_t>(total));
  if (e != cudaSuccess) {
    // A failed allocation is not sticky but stays the runtime's last error: clear it, or
    // the next launch check (cudaGetLastError) would report it as that kernel's failure.
    (void)cudaGetLastError();
    b.base_ = nullptr;
    return detail::cuda_status(e, "allocate " + std::to_string(bytes) + " bytes for " + name);
  }
  account(total);
  b.data_ = static_cast<unsigned char*>(b.base_) + kGuardBytes;
  b.bytes_ = bytes;
  b.name_ = std::move(name);
  KC_RETURN_IF_ERROR(detail::cuda_status(cudaMemset(b.base_, kGuardPattern, kGuardBytes), "guard " + b.name_));
  KC_RETURN_IF_ERROR(detail::cuda_status(
      cudaMemset(static_cast<unsigned char*>(b.data_) + bytes, kGuardPattern, kGuardBytes), "guard " + b.name_));
  return StatusOr<DeviceBuffer>(std::move(b));  // nvcc's C++17 front end does not move implicitly
}

Status DeviceBuffer::upload(const void* host, int64_t bytes) {
  if (bytes > bytes_) return internal_error("upload of " + std::to_string(bytes) + " bytes into " + name_);
  return detail::cuda_status(cudaMemcpy(data_, host, static_cast<size_t>(bytes), cudaMemcpyHostToDevice),
                             "upload " + name_);
}

Status DeviceBuffer::download(void* host, int64_t bytes) const {
  if (bytes > bytes_) return internal_error("download of " + std::to_string(bytes) + " bytes from " + name_);
  return detail::cuda_status(cudaMemcpy(host, data_, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost),
                             "download " + name_);
}

Status DeviceBuffer::fill(unsigned char byte) {
  return detail::cuda_status(cudaMemset(data_, byte, static_cast<size_t>(bytes_)), "fill " + name_);
}

Status DeviceBuffer::check_guards() const {
  if (base_ == nullptr) return ok_status();
  std::vector<unsigned char> lo(kGuardBytes), hi(kGuardBytes);
  KC_RETURN_IF_ERROR(
      detail::cuda_status(cudaMemcpy(lo.data(), base_, kGuardBytes, cudaMemcpyDeviceToHost), "read guard of " + name_));
  KC_RETURN_IF_ERROR(detail::cuda_status(
      cudaMemcpy(hi.data(), static_cast<const unsigned char*>(data_) + bytes_, kGuardBytes, cudaMemcpyDeviceToHost),
      "read guard of " + name_));
  int64_t below = 0, above = 0;
  for (int64_t i = 0; i < kGuardBytes; ++i) {
    below += lo[static_cast<size_t>(i)] != kGuardPattern;
    above += hi[static_cast<size_t>(i)] != kGuardPattern;
  }
  if (below == 0 && above == 0) return ok_status();
  return internal_error("device buffer " + name_ + " (" + std::to_string(bytes_) + " bytes): a kernel wrote " +
                        std::to_string(below) + " bytes of the guard band before it and " + std::to_string(above) +
                        " after it (out-of-bounds write)");
}

Status ensure_size(DeviceBuffer& buffer, int64_t bytes, const std::string& name) {
  if (buffer && buffer.bytes() >= bytes) return ok_status();
  buffer = DeviceBuffer();  // free first: the peak should not count both
  KC_ASSIGN_OR_RETURN(buffer, DeviceBuffer::allocate(bytes, name));
  return ok_status();
}

MemoryStats device_memory_stats() { return MemoryStats{g_current.load(), g_peak.load()}; }
void reset_device_memory_peak() { g_peak.store(g_current.load()); }

Status device_synchronize(const std::string& what) { return detail::cuda_status(cudaDeviceSynchronize(), what); }

struct EventTimer::Events {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

EventTimer::EventTimer() : events_(std::make_unique<Events>()) {}

EventTimer::~EventTimer() {
  if (events_->start) cudaEventDestroy(events_->start);
  if (events_->stop) cudaEventDestroy(events_->stop);
}

Status EventTimer::start(void* stream) {
  note_cuda_initialised();
  if (!events_->start) KC_RETURN_IF_ERROR(detail::cuda_status(cudaEventCreate(&events_->start), "event"));
  if (!events_->stop) KC_RETURN_IF_ERROR(detail::cuda_status(cudaEventCreate(&events_->stop), "event"));
  return detail::cuda_status(cudaEventRecord(events_->start, static_cast<cudaStream_t>(stream)), "record start event");
}

Status EventTimer::stop(void* stream) {
  return detail::cuda_status(cudaEventRecord(events_->stop, static_cast<cudaStream_t>(stream)), "record stop event");
}

StatusOr<double> EventTimer::seconds() const {
  KC_RETURN_IF_ERROR(detail::cuda_status(cudaEventSynchronize(events_->stop), "wait for stop event"));
  float ms = 0.f;
  KC_RETURN_IF_ERROR(detail::cuda_status(cudaEventElapsedTime(&ms, events_->start, events_->stop), "elapsed time"));
  return ms * 1e-3;
}

}  // namespace kc::gpu
