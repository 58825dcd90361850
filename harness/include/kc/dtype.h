// Storage dtypes of a case and their rounding on the host.
// Host tensors hold doubles; a tensor of dtype D only ever holds values that are
// exactly representable in D (round_to(D, v) == v). The reference computes in f64
// from these rounded values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kc {

enum class DType { kF64, kF32, kF16, kBF16 };

std::string_view dtype_name(DType dtype);                 // "f64", "f32", "f16", "bf16"
std::optional<DType> parse_dtype(std::string_view name);  // inverse of dtype_name

// Rounds v to the nearest value of `dtype` (ties to even), through Eigen's half and
// bfloat16 for the 16-bit types. Double rounding through float is innocuous here
// because float's 24-bit significand is at least 2p+2 for both 16-bit types. A NaN is
// returned as it is (its payload may be the poison of tensor.h).
double round_to(DType dtype, double v);

// Unit roundoff u = 2^-p of the dtype's significand (p includes the hidden bit).
double unit_roundoff(DType dtype);

// Half the smallest subnormal: the absolute error of rounding a result that falls in
// the subnormal range (the underflow term eta of the error model). For f64, whose half
// smallest subnormal is not a double, the smallest subnormal itself (2 eta).
double underflow_unit(DType dtype);

// The dtype's largest finite value (65504 for f16, 2^128 - 2^120 for bf16). A result
// below it plus half an ulp rounds to it; from there on, to inf.
double largest_finite(DType dtype);

// Exponent of the dtype's smallest normal number: -1022, -126, -14, and -126 for bf16
// (f32's range).
int min_normal_exponent(DType dtype);

// Bytes per element when stored on a device in this dtype.
int storage_bytes(DType dtype);

// The accumulation dtype the contract assumes for a storage dtype: f32 for f16/bf16.
DType default_accumulation(DType storage);

// Whether `acc` can accumulate sums of `storage` values: the storage dtype itself, or
// one with at least its precision and range (f16 and bf16 in f32 or f64, f32 in f64).
bool accumulates(DType acc, DType storage);

// Largest integer n such that every integer in [-n, n] is exact in the dtype.
int64_t exact_integer_limit(DType dtype);

}  // namespace kc
