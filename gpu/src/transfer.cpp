// The transfers shared by the GPU backends' host adapter and their resident stack run.
#include "transfer.h"

#include <vector>

#include "kc/gpu/host_convert.h"

namespace kc::gpu {

StatusOr<DeviceBuffer> upload(const Tensor& t, DType dtype, const std::string& name) {
  const std::vector<unsigned char> bytes = to_device_bytes(t, dtype);
  KC_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(static_cast<int64_t>(bytes.size()), name));
  KC_RETURN_IF_ERROR(b.upload(bytes.data(), static_cast<int64_t>(bytes.size())));
  return b;
}

StatusOr<DeviceBuffer> poisoned(int64_t bytes, const std::string& name) {
  KC_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(bytes, name));
  KC_RETURN_IF_ERROR(b.fill(0xFF));
  return b;
}

StatusOr<DeviceBuffer> output_for(const Tensor& t, DType dtype, const std::string& name) {
  return poisoned(t.size() * device_bytes(dtype), name);
}

Status download(const DeviceBuffer& b, DType dtype, Tensor& t) {
  std::vector<unsigned char> bytes(static_cast<size_t>(b.bytes()));
  KC_RETURN_IF_ERROR(b.download(bytes.data(), b.bytes()));
  from_device_bytes(bytes.data(), dtype, t);
  return ok_status();
}

Status finish(const Engine& engine, const char* op, std::initializer_list<const DeviceBuffer*> buffers) {
  KC_RETURN_IF_ERROR(device_synchronize(op));
  for (const DeviceBuffer* b : buffers) {
    if (b != nullptr) KC_RETURN_IF_ERROR(b->check_guards().with_context(op));
  }
  return engine.check_guards().with_context(op);
}

}  // namespace kc::gpu
