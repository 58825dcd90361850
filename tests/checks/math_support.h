// Cases and backends shared by the tests of the numerical checks (gradcheck, adjoint,
// weight_share): a backend that rounds to the case dtype and one with a planted backward.
// Test-only; header-only.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "checks/gradcheck.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"
#include "kc/runner.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"

namespace kc::math_test {

using test::conv_case;
using test::explicit_pad;
using test::pad_kind;
using ::testing::HasSubstr;

// The named check of one case run on a backend, the case asking for that check only.
inline CheckResult run_check(Case c, Backend& backend, const std::string& name) {
  c.checks = {name};
  const CaseResult r = check_case(c, backend);
  for (const CheckResult& cr : r.checks) {
    if (cr.name == name) return cr;
  }
  ADD_FAILURE() << name << " did not run: " << disposition_name(r.disposition) << " " << r.message;
  return make_result(name, Disposition::kCrashed, r.message);
}

inline std::string describe(const CheckResult& r) {
  return std::string(disposition_name(r.disposition)) + ": " + r.message;
}

inline Case seeded(Case c, uint64_t seed) {
  c.data.seed = seed;
  return c;
}

inline Case fused(Case c) {
  ConvParams p = std::get<ConvParams>(c.op);
  p.bias = true;
  c.op = ConvBiasReluParams{p};
  return c;
}

inline Case pool_case(int64_t batch, int64_t channels, Dims spatial, Dims kernel, Dims stride, PadSpec pad) {
  Case c;
  c.dtype = DType::kF64;
  c.input = {batch, channels, spatial};
  MaxPoolParams p;
  p.kernel = kernel;
  p.stride = stride;
  p.padding = pad;
  c.op = p;
  return c;
}

// Conv cases across ranks, groups, strides, dilations, padding kinds and modes.
inline std::vector<Case> conv_cases() {
  return {
      seeded(conv_case({.batch = 2,
                        .channels = 3,
                        .out_channels = 4,
                        .spatial = {11},
                        .kernel = {3},
                        .stride = {2},
                        .padding = explicit_pad({{1, 2}}),
                        .bias = true}),
             1),
      seeded(conv_case({.batch = 2,
                        .channels = 4,
                        .out_channels = 6,
                        .groups = 2,
                        .spatial = {7, 6},
                        .kernel = {3, 2},
                        .dilation = {2, 1},
                        .padding = pad_kind(PadKind::kSame),
                        .mode = PaddingMode::kReflect,
                        .dtype = DType::kF32}),
             2),
      seeded(conv_case({.batch = 1,
                        .channels = 2,
                        .out_channels = 2,
                        .spatial = {4, 5, 3},
                        .kernel = {2, 3, 2},
                        .padding = pad_kind(PadKind::kSameLower),
                        .mode = PaddingMode::kReplicate}),
             3),
      seeded(conv_case({.batch = 2,
                        .channels = 3,
                        .out_channels = 3,
                        .groups = 3,
                        .spatial = {6, 5},
                        .kernel = {3, 3},
                        .stride = {2, 1},
                        .padding = explicit_pad({{1, 1}, {2, 0}}),
                        .mode = PaddingMode::kCircular,
                        .bias = true,
                        .dtype = DType::kF16}),
             4),
      // x, w and b above 512 elements: the directional path.
      seeded(conv_case({.batch = 2,
                        .channels = 4,
                        .out_channels = 4,
                        .spatial = {10, 10},
                        .kernel = {3, 3},
                        .padding = pad_kind(PadKind::kSame),
                        .bias = true}),
             5),
  };
}

// A backend that rounds the oracle's outputs to the case dtype: a correct low-precision kernel.
class RoundingBackend : public test::DelegatingBackend {
 public:
  RoundingBackend() : DelegatingBackend("rounding") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    const DType d = y.dtype;
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    y.round_to_dtype(d);
    return ok_status();
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    const DType d = dx.dtype;
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    for (Tensor* t : {&dx, &dw, db}) {
      if (t != nullptr) t->round_to_dtype(d);
    }
    return ok_status();
  }
};

// A backend whose backward is the oracle's, then `plant` changes it.
class PlantedBackward : public test::DelegatingBackend {
 public:
  using Plant = std::function<void(const ConvGeometry&, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& dx,
                                   Tensor& dw, Tensor* db)>;
  explicit PlantedBackward(Plant plant) : DelegatingBackend("planted"), plant_(std::move(plant)) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    plant_(g, x, w, dy, dx, dw, db);
    return ok_status();
  }

 private:
  Plant plant_;
};

// dy with everything but the elements `keep` accepts zeroed (flat index, sample, position).
inline Tensor keep_only(const ConvGeometry& g, const Tensor& dy,
                        const std::function<bool(int64_t n, int64_t p)>& keep) {
  Tensor m = dy;
  const int64_t P = g.spatial.out_count(), per = g.out_channels * P;
  for (int64_t i = 0; i < m.size(); ++i) {
    if (!keep(i / per, i % P)) m[i] = 0.0;
  }
  return m;
}

}  // namespace kc::math_test
