// Bit-level f16/bf16 conversions on the host (no CUDA headers here, so this file and its
// tests build without nvcc). Round to nearest even, NaN stays NaN (quiet), overflow
// goes to infinity, f16 subnormals are exact.
#include "kc/gpu/host_convert.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kc::gpu {
namespace {

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float float_of(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

}  // namespace

uint16_t f32_to_bf16_bits(float v) {
  const uint32_t b = bits_of(v);
  if (std::isnan(v)) return static_cast<uint16_t>((b >> 16) | 0x40);  // keep sign, quiet
  const uint32_t rounding = 0x7FFF + ((b >> 16) & 1);                 // ties to even
  return static_cast<uint16_t>((b + rounding) >> 16);
}

float bf16_bits_to_f32(uint16_t bits) { return float_of(static_cast<uint32_t>(bits) << 16); }

uint16_t f32_to_f16_bits(float v) {
  const uint32_t b = bits_of(v);
  const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000);
  const float a = std::fabs(v);
  if (std::isnan(v)) return static_cast<uint16_t>(sign | 0x7E00);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7C00);  // rounds to infinity
  if (a < 6.103515625e-05f) {  // below 2^-14: subnormal (or zero), a multiple of 2^-24
    // a * 2^24 is exact in float; nearbyint rounds to even in the default mode.
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t ab = bits_of(a);
  const uint32_t exp = ((ab >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = ab & 0x7FFFFF;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // carries into the exponent correctly
  return static_cast<uint16_t>(sign | h);
}

float f16_bits_to_f32(uint16_t bits) {
  const float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  const int exp = (bits >> 10) & 0x1F;
  const int mant = bits & 0x3FF;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) {
    return std::copysign(mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity(), sign);
  }
  return sign * std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
}

int device_bytes(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    default:
      return 0;
  }
}

std::vector<unsigned char> to_device_bytes(const Tensor& t, DType dtype) {
  const size_t n = t.data.size();
  std::vector<unsigned char> out(n * static_cast<size_t>(device_bytes(dtype)));
  for (size_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(t.data[i]);
    if (dtype == DType::kF32) {
      std::memcpy(&out[4 * i], &v, 4);
    } else {
      const uint16_t h = dtype == DType::kF16 ? f32_to_f16_bits(v) : f32_to_bf16_bits(v);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

void from_device_bytes(const unsigned char* bytes, DType dtype, Tensor& t) {
  t.dtype = dtype;
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (dtype == DType::kF32) {
      uint32_t b;
      std::memcpy(&b, bytes + 4 * i, 4);
      t.data[i] = b == 0xFFFFFFFFu ? poison_value() : static_cast<double>(float_of(b));
    } else {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      t.data[i] = h == 0xFFFF ? poison_value() : dtype == DType::kF16 ? f16_bits_to_f32(h) : bf16_bits_to_f32(h);
    }
  }
}

}  // namespace kc::gpu
