// The adjoint check (docs/checks.md, "Notes on individual checks"): the identity holds on the oracle and a
// low-precision backend, bitwise in integer fills; planted backward bugs are caught.
#include <gtest/gtest.h>

#include "math_support.h"
#include "support/f32_accumulation.h"

namespace kc {
namespace {

using namespace math_test;

TEST(AdjointCheck, ReferenceAndLowPrecisionBackendPass) {
  auto oracle = make_reference_backend();
  RoundingBackend rounding;
  for (Case c : conv_cases()) {
    const CheckResult r = run_check(c, *oracle, "adjoint");
    EXPECT_EQ(r.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("<x,dx(g,w)> = "));
    c.dtype = DType::kF16;
    const CheckResult low = run_check(c, rounding, "adjoint");
    EXPECT_EQ(low.disposition, Disposition::kPassed) << case_to_one_line(c) << "\n" << describe(low);
  }
}

TEST(AdjointCheck, IntegerFillIsBitwiseAndCatchesOneUnit) {
  Case c = seeded(conv_case({.batch = 2,
                             .channels = 3,
                             .out_channels = 4,
                             .spatial = {6, 7},
                             .kernel = {3, 3},
                             .padding = pad_kind(PadKind::kSame),
                             .mode = PaddingMode::kReplicate,
                             .bias = true,
                             .dtype = DType::kF16}),
                  21);
  c.data.fill = Fill::kInteger;
  c.tolerance.kind = ToleranceKind::kExact;
  auto oracle = make_reference_backend();
  const CheckResult r = run_check(c, *oracle, "adjoint");
  EXPECT_EQ(r.disposition, Disposition::kPassed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("exact"));
  // One dx element off by one unit: invisible to a relative bound, not to exact sums
  // (x is nonzero almost everywhere in the integer fill).
  PlantedBackward be(
      [](const ConvGeometry&, const Tensor& x, const Tensor&, const Tensor&, Tensor& dx, Tensor&, Tensor*) {
        for (int64_t i = 0; i < x.size(); ++i) {
          if (x[i] != 0.0) {
            dx[i] += 1.0;
            return;
          }
        }
      });
  const CheckResult off = run_check(c, be, "adjoint");
  EXPECT_EQ(off.disposition, Disposition::kFailed) << describe(off);
  EXPECT_THAT(off.message, HasSubstr("dx (backward data) is not the adjoint"));
}

TEST(AdjointCheck, CatchesAKernelFlippedTheWrongWay) {
  // Forward correct; backward data correlates with the unflipped kernel (a transposed
  // conv must flip it), so dx is not the adjoint of the forward.
  PlantedBackward be(
      [](const ConvGeometry& g, const Tensor&, const Tensor& w, const Tensor& dy, Tensor& dx, Tensor&, Tensor*) {
        Tensor flipped = w;
        const int64_t taps = g.spatial.kernel_count();
        for (int64_t base = 0; base < w.size(); base += taps) {
          for (int64_t k = 0; k < taps; ++k) flipped[base + k] = w[base + taps - 1 - k];
        }
        dx.data = ref::conv_backward_data(g, dy, flipped).data;
      });
  for (const Case& c : conv_cases()) {
    const CheckResult r = run_check(c, be, "adjoint");
    EXPECT_EQ(r.disposition, Disposition::kFailed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("dx (backward data) is not the adjoint"));
    EXPECT_GT(r.max_error_ratio, 1.0);
  }
  PlantedBackward half_dw(
      [](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor& dw, Tensor*) {
        for (double& v : dw.data) v *= 0.5;
      });
  EXPECT_THAT(run_check(conv_cases()[1], half_dw, "adjoint").message,
              HasSubstr("dw (backward weight) is not the adjoint"));
}

// A forward and a dw that share one bug (both use 2w: a weight scale applied in both
// passes) agree with each other; dx, the one right pass, disagrees with both. The
// identity alone would blame dx; the oracle's inner product names the two.
TEST(AdjointCheck, ABugTheForwardAndDwShareIsNamedByTheOracle) {
  class DoubledWeights : public test::DelegatingBackend {
   public:
    explicit DoubledWeights(double dw_scale = 2.0) : DelegatingBackend("doubled"), dw_scale_(dw_scale) {}
    Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                        Tensor& y) override {
      Tensor w2 = w;
      for (double& v : w2.data) v *= 2.0;
      return DelegatingBackend::conv_forward(g, x, w2, b, relu, y);
    }
    Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                         const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
      KC_RETURN_IF_ERROR(DelegatingBackend::conv_backward(g, x, w, b, relu, dy, dx, dw, db));
      for (double& v : dw.data) v *= dw_scale_;
      return ok_status();
    }

   private:
    double dw_scale_;
  };
  DoubledWeights be;
  for (const Case& c : conv_cases()) {
    const CheckResult r = run_check(c, be, "adjoint");
    EXPECT_EQ(r.disposition, Disposition::kFailed) << case_to_one_line(c) << "\n" << describe(r);
    EXPECT_THAT(r.message, HasSubstr("the forward and dw (backward weight) depart from the oracle's inner product"));
    EXPECT_THAT(r.message, HasSubstr("while dx (backward data) matches it"));
    EXPECT_THAT(r.message, ::testing::Not(HasSubstr("dx (backward data) is not the adjoint")));
  }
  // Two wrong passes that disagree with each other too are not called one shared bug.
  DoubledWeights apart(3.0);
  const CheckResult r = run_check(conv_cases()[0], apart, "adjoint");
  EXPECT_EQ(r.disposition, Disposition::kFailed) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("the forward and dw (backward weight) each depart from the oracle's inner product, "
                                   "in different ways, while dx (backward data) matches it"));
}

// Past toy sizes a bound summing every output's worst case exceeds the inner products
// themselves (the check could only say MISTRUSTED); the noise model keeps it judging:
// correct kernels with f32 sums and 16-bit outputs pass, and a dx off by a relative 2^-9
// (f32) or 2^-2 (bf16: its rounding of 2^-9 per output leaves the sums less to resolve)
// fails.
TEST(AdjointCheck, JudgesAtSizesWhereWorstCasesSwampTheIdentity) {
  for (DType d : {DType::kF32, DType::kBF16}) {
    Case c = seeded(conv_case({.batch = 2,
                               .channels = 16,
                               .out_channels = 16,
                               .spatial = {64, 64},
                               .kernel = {3, 3},
                               .padding = pad_kind(PadKind::kSame),
                               .dtype = d}),
                    5);
    test::F32Accumulation f32;
    RoundingBackend rounding;
    for (Backend* be : std::initializer_list<Backend*>{&f32, &rounding}) {
      const CheckResult r = run_check(c, *be, "adjoint");
      EXPECT_EQ(r.disposition, Disposition::kPassed) << be->name() << " " << case_to_one_line(c) << "\n" << describe(r);
    }
    PlantedBackward scaled(
        [d](const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor& dx, Tensor&, Tensor*) {
          for (double& v : dx.data) v *= 1.0 + std::ldexp(1.0, d == DType::kF32 ? -9 : -2);
        });
    const CheckResult off = run_check(c, scaled, "adjoint");
    EXPECT_EQ(off.disposition, Disposition::kFailed) << case_to_one_line(c) << "\n" << describe(off);
    EXPECT_THAT(off.message, HasSubstr("dx (backward data) is not the adjoint"));
  }
}

TEST(AdjointCheck, AKernelThatWritesZerosIsNeverPassed) {
  class Zeros : public test::DelegatingBackend {
   public:
    Zeros() : DelegatingBackend("zeros") {}
    Status conv_forward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, Tensor& y) override {
      for (double& v : y.data) v = 0.0;
      return ok_status();
    }
    Status conv_backward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, const Tensor&,
                         Tensor& dx, Tensor& dw, Tensor* db) override {
      for (Tensor* t : {&dx, &dw, db}) {
        if (t != nullptr) t->data.assign(t->data.size(), 0.0);
      }
      return ok_status();
    }
  } be;
  const CheckResult r = run_check(conv_cases()[0], be, "adjoint");
  EXPECT_EQ(r.disposition, Disposition::kMistrusted) << describe(r);
  EXPECT_THAT(r.message, HasSubstr("holds trivially"));
}

TEST(AdjointCheck, NotApplicableToReluAndMaxPool) {
  auto oracle = make_reference_backend();
  const CheckResult relu = run_check(fused(conv_cases()[0]), *oracle, "adjoint");
  EXPECT_EQ(relu.disposition, Disposition::kSkipped);
  EXPECT_THAT(relu.message, HasSubstr("nonlinear"));
  const CheckResult pool = run_check(pool_case(1, 1, {6}, {2}, {2}, explicit_pad({{0, 0}})), *oracle, "adjoint");
  EXPECT_EQ(pool.disposition, Disposition::kSkipped);
  EXPECT_THAT(pool.message, HasSubstr("not linear"));
}

}  // namespace
}  // namespace kc
