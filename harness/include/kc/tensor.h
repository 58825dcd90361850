// Host tensors, layout N C [D] [H] W (row-major, W fastest).
// Tensor holds doubles tagged with the dtype they are representable in; IndexTensor
// holds int64 max-pool indices (flat position in the unpadded input plane). Both keep
// their elements in a HostVector, between guard bands (host_buffer.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kc/dtype.h"
#include "kc/host_buffer.h"

namespace kc {

using Dims = std::vector<int64_t>;

// Product of the dims (1 for an empty list). Callers validate sizes first.
int64_t element_count(const Dims& dims);
std::string dims_to_string(const Dims& dims);  // "[2, 3, 17, 9]"

struct Tensor {
  DType dtype = DType::kF64;
  Dims shape;
  HostVector<double> data;

  static Tensor zeros(DType dtype, Dims shape);
  static Tensor filled(DType dtype, Dims shape, double value);
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  double& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }
  // Rounds every element to `dtype` and tags the tensor with it.
  void round_to_dtype(DType to);
};

struct IndexTensor {
  Dims shape;
  HostVector<int64_t> data;
  int64_t size() const { return static_cast<int64_t>(data.size()); }
};

// The poison of output tensors (backend.h): a quiet NaN whose payload no arithmetic
// produces (x86 and CUDA make NaNs with an empty or all-ones payload), so that an
// element never written can be told from one a kernel computed as NaN.
inline constexpr uint64_t kPoisonBits = 0x7FF80000DEADBEEFull;
double poison_value();
bool is_poison(double v);
Tensor poisoned(DType dtype, const Dims& shape);

// |t| element by element (shape and dtype kept).
Tensor absolute(Tensor t);

// Bitwise equality of shape and values (NaN equals NaN with the same bits).
bool bitwise_equal(const Tensor& a, const Tensor& b);

// A case's inputs (core/fill.h makes them from its data section).
struct OpInputs {
  Tensor x;   // [N, C, in...]
  Tensor w;   // conv only: [Cout, Cin/G, k...]
  Tensor b;   // conv with bias: [Cout]
  Tensor dy;  // the cotangent for the backward pass: [N, Cout or C, out...]
};

}  // namespace kc
