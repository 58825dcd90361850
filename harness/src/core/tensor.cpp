// Host tensor helpers.
#include "kc/tensor.h"

#include <cmath>
#include <cstring>

namespace kc {

double poison_value() {
  double v;
  std::memcpy(&v, &kPoisonBits, sizeof v);
  return v;
}

bool is_poison(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits == kPoisonBits;
}

Tensor absolute(Tensor t) {
  for (double& v : t.data) v = std::abs(v);
  return t;
}

Tensor poisoned(DType dtype, const Dims& shape) { return Tensor::filled(dtype, shape, poison_value()); }

int64_t element_count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string dims_to_string(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Tensor Tensor::zeros(DType dtype, Dims shape) { return filled(dtype, std::move(shape), 0.0); }

Tensor Tensor::filled(DType dtype, Dims shape, double value) {
  Tensor t;
  t.dtype = dtype;
  t.data.assign(static_cast<size_t>(element_count(shape)), round_to(dtype, value));
  t.shape = std::move(shape);
  return t;
}

void Tensor::round_to_dtype(DType to) {
  dtype = to;
  for (double& v : data) v = round_to(to, v);
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape || a.data.size() != b.data.size()) return false;
  return a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(double)) == 0;
}

}  // namespace kc
