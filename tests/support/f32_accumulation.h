// A correct kernel that is not the oracle: the reference's results, each moved by a
// relative error the size an f32 accumulation of its n terms makes (up to sqrt(n) *
// 2^-24, sign and size from a hash of the value and its position, so that a call on the
// same inputs gives the same bits, as a deterministic kernel does); in f64 cases, and
// on integer results (exact in f32), unmoved; then stored in the case dtype, as a
// kernel's outputs are (76800 is inf in f16). The stack checks
// must pass it wherever they pass the oracle: it is what an f16/bf16 GPU kernel with
// f32 accumulators looks like to them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "support/delegating_backend.h"

namespace kc::test {

class F32Accumulation final : public DelegatingBackend {
 public:
  explicit F32Accumulation(std::string name = "f32-accumulation") : DelegatingBackend(std::move(name)) {}
  Status supports(const Case& c) const override {  // as a GPU backend, which sums in f32
    if (c.accumulation == DType::kF64 && c.dtype != DType::kF64) {
      return unimplemented("accumulation: f64: this kernel accumulates in f32");
    }
    return DelegatingBackend::supports(c);
  }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    if (x.dtype != DType::kF64) perturb(y, g.reduction_length() + 1);  // f64 sums for f64
    y.round_to_dtype(x.dtype);  // stored in the case dtype, as a kernel's outputs are
    return ok_status();
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (x.dtype == DType::kF64) return ok_status();
    const int64_t positions = g.batch * g.spatial.out_count();
    perturb(dx, g.out_per_group() * g.spatial.kernel_count());
    perturb(dw, positions);
    if (db != nullptr) perturb(*db, positions);
    dx.round_to_dtype(x.dtype);
    dw.round_to_dtype(x.dtype);
    if (db != nullptr) db->round_to_dtype(x.dtype);
    return ok_status();
  }
  // A max pool selects: y is x's own value. dx sums the dy of the windows that chose an
  // element (exact in f32 for a few terms), stored in the case dtype.
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    const DType dtype = dy.dtype;
    KC_RETURN_IF_ERROR(reference().maxpool_backward(g, dy, indices, dx));
    dx.round_to_dtype(dtype);
    return ok_status();
  }

 private:
  static void perturb(Tensor& t, int64_t n) {
    const double scale = std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24);
    for (int64_t i = 0; i < t.size(); ++i) {
      if (std::nearbyint(t[i]) == t[i]) continue;  // f32 sums of integers below 2^24 are exact
      uint64_t h;
      std::memcpy(&h, &t.data[static_cast<size_t>(i)], sizeof h);
      h ^= static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 33;
      h *= 0xFF51AFD7ED558CCDull;
      h ^= h >> 33;
      const double r = static_cast<double>(h >> 11) * std::ldexp(1.0, -53) * 2.0 - 1.0;  // [-1, 1)
      t[i] *= 1.0 + scale * r;
    }
  }
};

}  // namespace kc::test
