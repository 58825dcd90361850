// The data fills (see fill.h). Counter-based: element i of tensor `stream` is
// splitmix64(seed, stream, i), so generation order and threads never change the data.
#include "core/fill.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/boundary_values.h"
#include "core/validate.h"
#include "core/zero_region.h"
#include "kc/shape.h"
#include "ops/op_module.h"

namespace kc {
namespace {

enum Stream : uint64_t { kX = 1, kW = 2, kB = 3, kDy = 4, kMask = 16 };

uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double normal01(uint64_t seed, uint64_t stream, uint64_t i) {  // Box-Muller on two draws
  const double u1 = 1.0 - uniform01(seed, stream, 2 * i), u2 = uniform01(seed, stream, 2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Special values for position i: about one element in three is special.
double special_value(uint64_t seed, uint64_t i, DType dtype) {
  const double u = uniform01(seed, kX + kMask, i);
  const double tiny = std::ldexp(1.0, dtype == DType::kF16    ? -24
                                      : dtype == DType::kBF16 ? -133
                                      : dtype == DType::kF32  ? -149
                                                              : -1074);  // smallest subnormal
  const double inf = std::numeric_limits<double>::infinity();
  if (u < 0.05) return std::numeric_limits<double>::quiet_NaN();
  if (u < 0.10) return inf;
  if (u < 0.15) return -inf;
  if (u < 0.20) return 0.0;
  if (u < 0.25) return -0.0;
  if (u < 0.33) return tiny * static_cast<double>(1 + (splitmix64(seed ^ i) % 7));
  return 2.0 * uniform01(seed, kX, i) - 1.0;
}

// Integers in [-mag, mag], zero except for about `density` of the elements, and never
// more than `max_nonzero` nonzeros in the tensor.
void integer_fill(Tensor& t, uint64_t seed, uint64_t stream, int64_t mag, double density, int64_t max_nonzero) {
  int64_t nonzero = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const bool on = uniform01(seed, stream + kMask, static_cast<uint64_t>(i)) < density;
    if (!on || nonzero >= max_nonzero) continue;
    const int64_t v =
        static_cast<int64_t>(uniform01(seed, stream, static_cast<uint64_t>(i)) * static_cast<double>(2 * mag + 1)) -
        mag;
    t[i] = static_cast<double>(v == 0 ? 1 : v);
    ++nonzero;
  }
}

void value_fill(Tensor& t, const Case& c, uint64_t stream) {
  const uint64_t seed = c.data.seed;
  for (int64_t i = 0; i < t.size(); ++i) {
    const uint64_t u = static_cast<uint64_t>(i);
    double v = 2.0 * uniform01(seed, stream, u) - 1.0;
    if (c.data.fill == Fill::kNormal) v = normal01(seed, stream, u);
    if (c.data.fill == Fill::kTies)
      v = std::array<double, 4>{-1.0, 0.0, 0.5, 1.0}[splitmix64(seed ^ (stream << 40) ^ u) % 4];
    if (c.data.fill == Fill::kSpecial && stream == kX) v = special_value(seed, u, c.dtype);
    if (c.data.fill == Fill::kBoundary) v = boundary_element(seed, stream, u, c.dtype);
    t[i] = v;
  }
}

// Exact integer fill for conv: with magnitudes <= m and at most nnz(w) nonzero weights,
// every y is a sum of at most nnz(w) products plus b; every dx at most
// copies * nnz(w) products; every dw and db at most nnz(dy) terms.
void integer_conv_inputs(const Case& c, const ConvGeometry& g, OpInputs& in) {
  const int64_t limit = exact_integer_limit(c.dtype) - 1;
  const int64_t m = limit >= 4096 ? 3 : 1;  // magnitudes of x, w, dy
  const int64_t copies = max_pad_copies(g);
  const int64_t cap_w = std::max<int64_t>(1, (limit - m) / (m * m * copies));
  const int64_t cap_dy = std::max<int64_t>(1, limit / (m * m));
  const double dens_w = std::min(1.0, 0.9 * static_cast<double>(cap_w) / static_cast<double>(in.w.size()));
  const double dens_dy = std::min(1.0, 0.9 * static_cast<double>(cap_dy) / static_cast<double>(in.dy.size()));
  integer_fill(in.x, c.data.seed, kX, m, 0.9, in.x.size());
  integer_fill(in.w, c.data.seed, kW, m, dens_w, cap_w);
  integer_fill(in.dy, c.data.seed, kDy, m, dens_dy, cap_dy);
  if (g.bias) integer_fill(in.b, c.data.seed, kB, m, 0.9, in.b.size());
}

}  // namespace

double uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t h = splitmix64(splitmix64(seed ^ splitmix64(stream)) ^ index);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

StatusOr<OpInputs> make_inputs(const Case& c) {
  KC_RETURN_IF_ERROR(validate(c));
  if (is_stack(c)) return invalid_argument("op: stack inputs are made per layer (use make_stack_inputs)");
  OpInputs in;
  const InputShapes shapes = input_shapes(c);
  in.x = Tensor::zeros(c.dtype, shapes.x);
  if (shapes.w) in.w = Tensor::zeros(c.dtype, *shapes.w);
  if (shapes.b) in.b = Tensor::zeros(c.dtype, *shapes.b);
  in.dy = Tensor::zeros(c.dtype, shapes.dy);
  if (c.data.fill == Fill::kInteger && shapes.w) {  // weights: sums kept exact in the dtype
    integer_conv_inputs(c, unchecked_conv_geometry(c), in);
  } else if (c.data.fill == Fill::kInteger) {  // pool: small integers, whose window sums are exact
    integer_fill(in.x, c.data.seed, kX, 8, 1.0, in.x.size());
    integer_fill(in.dy, c.data.seed, kDy, 8, 1.0, in.dy.size());
  } else {
    value_fill(in.x, c, kX);
    value_fill(in.w, c, kW);
    value_fill(in.b, c, kB);
    value_fill(in.dy, c, kDy);
  }
  for (auto* t : {&in.x, &in.w, &in.b, &in.dy}) t->round_to_dtype(c.dtype);
  for (const ZeroRegion& r : c.data.zero) {  // regions of the fill; inline data below replaces them
    apply_zero_region(r.tensor == ZeroTensor::kX ? in.x : r.tensor == ZeroTensor::kW ? in.w : in.dy, r);
  }
  for (const auto& [name, t] : c.tensors) {  // inline data wins over the fill
    Tensor& dst = name == "x" ? in.x : name == "w" ? in.w : name == "b" ? in.b : in.dy;
    dst = t;
    dst.round_to_dtype(c.dtype);
  }
  return in;
}

}  // namespace kc
