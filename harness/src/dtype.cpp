// Dtype names, rounding through Eigen's half and bfloat16, and unit roundoffs.
#include "kc/dtype.h"

#include <Eigen/Core>
#include <cmath>

namespace kc {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF64: return "f64";
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    if (dtype_name(d) == name) return d;
  }
  return std::nullopt;
}

double round_to(DType dtype, double v) {
  if (std::isnan(v)) return v;  // every NaN is a NaN of every dtype; its payload (the poison) is kept
  switch (dtype) {
    case DType::kF64: return v;
    case DType::kF32: return static_cast<double>(static_cast<float>(v));
    case DType::kF16:
      return static_cast<double>(static_cast<float>(Eigen::half(static_cast<float>(v))));
    case DType::kBF16:
      return static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(v))));
  }
  return v;
}

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kF64: return std::ldexp(1.0, -53);
    case DType::kF32: return std::ldexp(1.0, -24);
    case DType::kF16: return std::ldexp(1.0, -11);
    case DType::kBF16: return std::ldexp(1.0, -8);
  }
  return 0.0;
}

double underflow_unit(DType dtype) {
  switch (dtype) {
    case DType::kF64: return std::ldexp(1.0, -1074);  // 2^-1075 would round to 0
    case DType::kF32: return std::ldexp(1.0, -150);
    case DType::kF16: return std::ldexp(1.0, -25);
    case DType::kBF16: return std::ldexp(1.0, -134);
  }
  return 0.0;
}

int min_normal_exponent(DType dtype) {
  switch (dtype) {
    case DType::kF64: return -1022;
    case DType::kF32: return -126;
    case DType::kF16: return -14;
    case DType::kBF16: return -126;
  }
  return -1022;
}

int storage_bytes(DType dtype) {
  switch (dtype) {
    case DType::kF64: return 8;
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
  }
  return 0;
}

DType default_accumulation(DType storage) {
  return storage == DType::kF64 ? DType::kF64 : DType::kF32;
}

bool accumulates(DType acc, DType storage) {
  if (acc == storage || acc == DType::kF64) return true;
  return acc == DType::kF32 && storage != DType::kF64;  // f16 lacks bf16's range, bf16 f16's precision
}

int64_t exact_integer_limit(DType dtype) {
  switch (dtype) {
    case DType::kF64: return int64_t{1} << 53;
    case DType::kF32: return int64_t{1} << 24;
    case DType::kF16: return int64_t{1} << 11;
    case DType::kBF16: return int64_t{1} << 8;
  }
  return 0;
}

}  // namespace kc
