// Dtype names, rounding through Eigen's half and bfloat16, and unit roundoffs.
#include "kc/dtype.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kc {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return "f64";
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    if (dtype_name(d) == name) return d;
  }
  return std::nullopt;
}

namespace {

// v in f32 rounded to odd: truncated toward zero, with the last bit set when anything was
// cut off. f32 keeps 13 more bits than f16 and 16 more than bf16, so rounding this once
// more to nearest (Eigen's conversions from float) gives v rounded once to nearest even:
// rounding to nearest twice (f64 -> f32 -> f16) can land on a tie that v was not
// (1 + 2^-11 + 2^-40 is 1 + 2^-10 in f16, not 1).
float to_f32_odd(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || std::isinf(v)) return f;
  if (std::abs(static_cast<double>(f)) > std::abs(v)) f = std::nextafter(f, 0.0f);  // toward zero
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1u;  // sticky: inexact
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

double round_to(DType dtype, double v) {
  if (std::isnan(v)) return v;  // every NaN is a NaN of every dtype; its payload (the poison) is kept
  switch (dtype) {
    case DType::kF64:
      return v;
    case DType::kF32:
      return static_cast<double>(static_cast<float>(v));
    case DType::kF16:
      return static_cast<double>(static_cast<float>(Eigen::half(to_f32_odd(v))));
    case DType::kBF16:
      return static_cast<double>(static_cast<float>(Eigen::bfloat16(to_f32_odd(v))));
  }
  return v;
}

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return std::ldexp(1.0, -53);
    case DType::kF32:
      return std::ldexp(1.0, -24);
    case DType::kF16:
      return std::ldexp(1.0, -11);
    case DType::kBF16:
      return std::ldexp(1.0, -8);
  }
  return 0.0;
}

double largest_finite(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return std::numeric_limits<double>::max();
    case DType::kF32:
      return std::numeric_limits<float>::max();
    case DType::kF16:
      return 65504.0;
    case DType::kBF16:
      return std::ldexp(255.0, 120);
  }
  return 0.0;
}

double underflow_unit(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return std::ldexp(1.0, -1074);  // 2^-1075 would round to 0
    case DType::kF32:
      return std::ldexp(1.0, -150);
    case DType::kF16:
      return std::ldexp(1.0, -25);
    case DType::kBF16:
      return std::ldexp(1.0, -134);
  }
  return 0.0;
}

int min_normal_exponent(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return -1022;
    case DType::kF32:
      return -126;
    case DType::kF16:
      return -14;
    case DType::kBF16:
      return -126;
  }
  return -1022;
}

int storage_bytes(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 8;
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
  }
  return 0;
}

DType default_accumulation(DType storage) { return storage == DType::kF64 ? DType::kF64 : DType::kF32; }

bool accumulates(DType acc, DType storage) {
  if (acc == storage || acc == DType::kF64) return true;
  return acc == DType::kF32 && storage != DType::kF64;  // f16 lacks bf16's range, bf16 f16's precision
}

int64_t exact_integer_limit(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return int64_t{1} << 53;
    case DType::kF32:
      return int64_t{1} << 24;
    case DType::kF16:
      return int64_t{1} << 11;
    case DType::kBF16:
      return int64_t{1} << 8;
  }
  return 0;
}

}  // namespace kc
