// The bench's face of the GPU backends (label gpu): every BenchOp prepared by cuda and
// cudnn gives what the backend's host calls give on the same inputs (bitwise for cuda,
// whose kernels are the same; within a small tolerance for cudnn, whose prepared op
// picks its algorithm by Find instead of heuristics), the ceilings are positive and
// plausible, and deterministic: false either runs or says unimplemented. Without a
// device every test but the last is skipped with the device probe's reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "backend/invoke.h"
#include "gpu_cases.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/device.h"
#include "require_device.h"

namespace kc {
namespace {

// The ops the bench times for the case (docs/bench.md): conv_backward_bias with a bias.
std::vector<BenchOp> ops_of(const Case& c, const OpGeometry& g) {
  if (op_traits(c).indices) return {BenchOp::kPoolInference, BenchOp::kPoolTraining, BenchOp::kPoolBackward};
  if (std::holds_alternative<AvgPoolParams>(c.op)) return {BenchOp::kAvgPoolForward, BenchOp::kAvgPoolBackward};
  if (op_traits(c).relu) return {BenchOp::kConvForward, BenchOp::kConvBackward};
  std::vector<BenchOp> ops = {BenchOp::kConvForward, BenchOp::kConvBackward, BenchOp::kConvBackwardData,
                              BenchOp::kConvBackwardWeight};
  if (std::get<ConvGeometry>(g).bias) ops.push_back(BenchOp::kConvBackwardBias);
  return ops;
}

// bitwise, or |a - b| <= tol * (1 + max |b|) everywhere (NaN only where both are).
::testing::AssertionResult same(const Tensor& a, const Tensor& b, double tol) {
  if (a.shape != b.shape) return ::testing::AssertionFailure() << "shapes differ";
  if (tol == 0.0) return bitwise_equal(a, b) ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "bits";
  double scale = 0.0;
  for (double v : b.data) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return ::testing::AssertionFailure() << "NaN at " << i;
    if (!std::isnan(a[i]) && std::fabs(a[i] - b[i]) > tol * (1.0 + scale)) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

void expect_matches(const PreparedOutputs& p, const OpOutputs& h, BenchOp op, double tol, const std::string& what) {
  switch (op) {
    case BenchOp::kConvForward:
    case BenchOp::kPoolInference:
    case BenchOp::kAvgPoolForward:
      EXPECT_TRUE(same(p.y, h.y, tol)) << what;
      break;
    case BenchOp::kPoolTraining:
      EXPECT_TRUE(same(p.y, h.y, tol)) << what;
      ASSERT_TRUE(p.indices && h.indices) << what;
      EXPECT_EQ(p.indices->data, h.indices->data) << what;
      break;
    case BenchOp::kPoolBackward:
      EXPECT_TRUE(same(p.dx, h.dx, tol)) << what;
      ASSERT_TRUE(p.indices && h.indices) << what;
      EXPECT_EQ(p.indices->data, h.indices->data) << what;
      break;
    case BenchOp::kConvBackward:
      EXPECT_TRUE(same(p.dx, h.dx, tol)) << what;
      EXPECT_TRUE(same(p.dw, h.dw, tol)) << what;
      if (h.db.size() > 0) {
        EXPECT_TRUE(same(p.db, h.db, tol)) << what;
      }
      break;
    case BenchOp::kConvBackwardData:
    case BenchOp::kAvgPoolBackward:
      EXPECT_TRUE(same(p.dx, h.dx, tol)) << what;
      break;
    case BenchOp::kConvBackwardWeight:
      EXPECT_TRUE(same(p.dw, h.dw, tol)) << what;
      break;
    case BenchOp::kConvBackwardBias:
      EXPECT_TRUE(same(p.db, h.db, tol)) << what;
      break;
  }
}

// Runs every op of the cases that `backend` supports; counts in *compared those compared.
void check_ops(Backend& backend, const std::vector<Case>& cases, double tol, int* compared) {
  for (const Case& c : cases) {
    if (!backend.supports(c).ok()) continue;
    auto in = make_inputs(c);
    auto g = op_geometry(c);
    if (!in.ok() || !g.ok()) ADD_FAILURE() << c.name << ": inputs or geometry";
    if (!in.ok() || !g.ok()) continue;
    const OpOutputs host = invoke(backend, c, *g, *in, Pass::kForwardBackward);
    for (BenchOp op : ops_of(c, *g)) {
      // An inference-mode pool keeps no indices on the host side: nothing to compare with.
      const bool routed = op == BenchOp::kPoolTraining || op == BenchOp::kPoolBackward;
      if (routed && !host.indices) continue;
      const std::string what = c.name + " " + std::string(bench_op_name(op)) + " on " + backend.name();
      auto p = backend.prepare(c, op, *in, {});
      if (!p.ok()) {  // a refusal must say why, and only as unimplemented
        EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented) << what << ": " << p.status().to_string();
        continue;
      }
      PreparedOp& prepared = **p;
      for (int i = 0; i < 3; ++i) ASSERT_TRUE(prepared.run().ok()) << what;
      ASSERT_TRUE(prepared.synchronize().ok()) << what;
      EXPECT_GT(prepared.last_seconds().value_or(0.0), 0.0) << what;
      EXPECT_EQ(prepared.device(), "gpu");
      EXPECT_GT(prepared.cache_bytes(), 0) << what;
      EXPECT_GT(prepared.memory().held_bytes, 0) << what;
      EXPECT_GE(prepared.memory().device_peak_bytes, 0) << what;
      EXPECT_FALSE(prepared.algorithm().empty()) << what;
      auto out = prepared.outputs();
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
      expect_matches(*out, host, op, tol, what);
      ++*compared;
    }
  }
}

std::vector<Case> small_cases() {
  const std::vector<Case> all = gpu_test::cuda_cases();
  // conv with bias, fused, pool (training), pool (inference), a reflect-padded conv,
  // average pools
  std::vector<Case> r;
  for (const Case& c : all) {
    if (c.dtype == DType::kF32 || c.name == "conv2d same bias bf16") r.push_back(c);
  }
  return r;
}

TEST(GpuPreparedOp, CudaOpsMatchTheHostCalls) {
  KC_REQUIRE_DEVICE();
  auto backend = gpu::make_cuda_backend();
  int compared = 0;
  check_ops(*backend, small_cases(), 0.0, &compared);
  EXPECT_GT(compared, 20);
}

#ifdef KC_HAVE_CUDNN
TEST(GpuPreparedOp, CudnnOpsMatchTheHostCalls) {
  KC_REQUIRE_DEVICE();
  auto backend = gpu::make_cudnn_backend();
  if (Status s = backend->available(); !s.ok()) GTEST_SKIP() << "cudnn: " << s.message();
  int compared = 0;
  check_ops(*backend, small_cases(), 1e-2, &compared);
  EXPECT_GT(compared, 5);
}
#endif

TEST(GpuPreparedOp, SplitOpsOfAFusedCaseAreRefused) {
  KC_REQUIRE_DEVICE();
  const Case c = gpu_test::cuda_cases()[1];  // fused groups f32
  ASSERT_TRUE(op_traits(c).relu);
  auto in = make_inputs(c);
  ASSERT_TRUE(in.ok());
  auto backend = gpu::make_cuda_backend();
  auto p = backend->prepare(c, BenchOp::kConvBackwardWeight, *in, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
}

TEST(GpuPreparedOp, AtomicWeightGradientRunsOrSaysUnimplemented) {
  KC_REQUIRE_DEVICE();
  Case c = gpu_test::conv({8, 8, 8, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, test::pad_kind(PadKind::kSame)},
                          "long reduction", DType::kF32);
  auto in = make_inputs(c);
  ASSERT_TRUE(in.ok());
  auto backend = gpu::make_cuda_backend();
  auto fixed = backend->prepare(c, BenchOp::kConvBackwardWeight, *in, {true});
  ASSERT_TRUE(fixed.ok()) << fixed.status().to_string();
  PrepareOptions atomic;
  atomic.deterministic = false;
  auto fast = backend->prepare(c, BenchOp::kConvBackwardWeight, *in, atomic);
  if (!fast.ok()) {
    EXPECT_EQ(fast.status().code(), StatusCode::kUnimplemented) << fast.status().to_string();
    return;
  }
  ASSERT_TRUE((*fast)->run().ok());
  auto a = (*fixed)->outputs();
  auto b = (*fast)->outputs();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(same(b->dw, a->dw, 1e-5));  // the same sum in another order
  EXPECT_NE((*fast)->algorithm(), (*fixed)->algorithm());
}

TEST(GpuCeilings, AreMeasuredAndPlausible) {
  KC_REQUIRE_DEVICE();
  auto backend = gpu::make_cuda_backend();
  auto ceilings = backend->measure_ceilings();
  ASSERT_TRUE(ceilings.ok()) << ceilings.status().to_string();
  ASSERT_FALSE(ceilings->empty());
  bool copy = false;
  for (const Ceiling& c : *ceilings) {
    EXPECT_EQ(c.device, "gpu") << c.name;
    EXPECT_GT(c.per_second, 0.0) << c.name;
    EXPECT_FALSE(c.detail.empty()) << c.name;
    if (c.name == "d2d copy") {
      copy = true;
      EXPECT_FALSE(c.flops);
      EXPECT_LT(c.per_second, 20e12) << "no GPU memory moves 20 TB/s: the copy was not timed";
      EXPECT_GT(c.per_second, 50e9) << "below PCIe speed: not a device-to-device copy";
    } else {
      EXPECT_TRUE(c.flops) << c.name;
      EXPECT_TRUE(c.dtype.has_value()) << c.name;
      EXPECT_LT(c.per_second, 10e15) << c.name << ": over 10 PFLOP/s dense";
    }
  }
  EXPECT_TRUE(copy);
}

// The other side: without a device, prepare and the ceilings fail with the reason.
TEST(GpuPreparedOp, WithoutADeviceSaysWhy) {
  auto device = gpu::probe_device();
  if (device.ok()) GTEST_SKIP() << "a device is present: " << gpu::describe(*device);
  const Case c = gpu_test::cuda_cases()[0];
  auto in = make_inputs(c);
  ASSERT_TRUE(in.ok());
  auto backend = gpu::make_cuda_backend();
  auto p = backend->prepare(c, BenchOp::kConvForward, *in, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), device.status().code()) << p.status().to_string();
  auto ceilings = backend->measure_ceilings();
  EXPECT_FALSE(ceilings.ok());
}

}  // namespace
}  // namespace kc
