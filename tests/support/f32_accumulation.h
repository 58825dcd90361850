// A correct kernel that is not the oracle: the reference's results, each moved by a
// relative error the size an f32 accumulation of its n terms makes (up to sqrt(n) *
// 2^-24, sign and size from a hash of the value and its position, so that a call on the
// same inputs gives the same bits, as a deterministic kernel does); in f64 cases, and
// on integer results (exact in f32), unmoved; then stored in the case dtype, as a
// kernel's outputs are (76800 is inf in f16). The stack checks
// must pass it wherever they pass the oracle: it is what an f16/bf16 GPU kernel with
// f32 accumulators looks like to them. With random_dw its dw moves at random on every
// call instead (a dw summed with float atomics, in any order), and it refuses the cases
// that say `deterministic: true`, as such a kernel must: every other case must pass.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "support/delegating_backend.h"

namespace kc::test {

class F32Accumulation final : public DelegatingBackend {
 public:
  explicit F32Accumulation(std::string name = "f32-accumulation", bool random_dw = false)
      : DelegatingBackend(std::move(name)), random_dw_(random_dw) {}
  Status supports(const Case& c) const override {  // as a GPU backend, which sums in f32
    if (c.accumulation == DType::kF64 && c.dtype != DType::kF64) {
      return unimplemented("accumulation: f64: this kernel accumulates in f32");
    }
    if (random_dw_ && c.deterministic) return unimplemented("deterministic: true: dw is summed with float atomics");
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
    perturb(dw, positions, random_dw_ ? &rng_ : nullptr);
    if (db != nullptr) perturb(*db, positions);
    dx.round_to_dtype(x.dtype);
    dw.round_to_dtype(x.dtype);
    if (db != nullptr) db->round_to_dtype(x.dtype);
    return ok_status();
  }
  // An average is a sum and a division, each exact or rounded once in f32, well inside
  // the tolerance: the oracle's value, stored in the case dtype.
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().avgpool_forward(g, x, y));
    y.round_to_dtype(x.dtype);
    return ok_status();
  }
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    KC_RETURN_IF_ERROR(reference().avgpool_backward(g, dy, dx));
    dx.round_to_dtype(dy.dtype);
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
  // Moves by a hash of the value and position, or by `rng` (the order of atomics).
  static void perturb(Tensor& t, int64_t n, std::mt19937_64* rng = nullptr) {
    const double scale = std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24);
    for (int64_t i = 0; i < t.size(); ++i) {
      if (std::nearbyint(t[i]) == t[i]) continue;  // f32 sums of integers below 2^24 are exact
      if (rng != nullptr) {
        t[i] *= 1.0 + scale * std::uniform_real_distribution<double>(-1.0, 1.0)(*rng);
        continue;
      }
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

  bool random_dw_ = false;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace kc::test
