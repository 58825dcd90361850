// Host tensors (doubles tagged with a dtype) to and from the bytes a device stores: f32,
// f16 (IEEE binary16) or bf16, little-endian, round to nearest even. A tensor's values
// are already representable in its dtype (dtype.h), so the conversion on upload is exact;
// on download every stored value converts to a double exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/dtype.h"
#include "kc/tensor.h"

namespace kc::gpu {

uint16_t f32_to_f16_bits(float v);
float f16_bits_to_f32(uint16_t bits);
uint16_t f32_to_bf16_bits(float v);
float bf16_bits_to_f32(uint16_t bits);

// Bytes per element on the device (4 or 2); 0 for f64, which has no kernels.
int device_bytes(DType dtype);

// t's values as `dtype` storage (t.size() * device_bytes(dtype) bytes).
std::vector<unsigned char> to_device_bytes(const Tensor& t, DType dtype);

// Fills t.data (t.size() elements, its shape kept) from storage bytes of `dtype`, and
// tags t with that dtype. The device's poison (every byte 0xFF, a NaN that kernels do
// not compute: CUDA's NaN is 0x7FFF / 0x7FFFFFFF) becomes the host poison
// (kc::poison_value()), so that the integrity check can name unwritten elements.
void from_device_bytes(const unsigned char* bytes, DType dtype, Tensor& t);

}  // namespace kc::gpu
