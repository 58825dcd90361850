// Host <-> device transfers of the GPU backends (device_backend.cpp, device_stack.cpp),
// in the case dtype's storage (host_convert.h). Internal to kc_gpu.
#pragma once

#include <initializer_list>
#include <string>

#include "engine.h"
#include "kc/gpu/device_buffer.h"
#include "kc/tensor.h"

namespace kc::gpu {

StatusOr<DeviceBuffer> upload(const Tensor& t, DType dtype, const std::string& name);
// `bytes` of device memory, every byte 0xFF: NaN in f32/f16/bf16, the "never written"
// sentinel of argmax offsets.
StatusOr<DeviceBuffer> poisoned(int64_t bytes, const std::string& name);
StatusOr<DeviceBuffer> output_for(const Tensor& t, DType dtype, const std::string& name);
// t keeps its shape; its values and dtype come from the buffer.
Status download(const DeviceBuffer& b, DType dtype, Tensor& t);

// After an op: wait for the device (asynchronous faults surface here), then the guards
// of the op's buffers and of the engine's scratch.
Status finish(const Engine& engine, const char* op, std::initializer_list<const DeviceBuffer*> buffers);

}  // namespace kc::gpu
