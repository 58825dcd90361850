// The cuda, cuda.direct and cudnn backends on a real device (label gpu): every check of
// the harness on small cases of each op, mode and dtype (the CUTLASS engine's among
// them), PreparedRun against the backend, and the deterministic weight gradient. Without
// a usable device every test is skipped with the device probe's reason.
#include <gtest/gtest.h>

#include "backend/invoke.h"
#include "gpu_cases.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/prepared_run.h"
#include "kc/runner.h"
#include "require_device.h"

#include "engine.h"  // gpu/src: the engines behind the backends

namespace kc {
namespace {

std::string describe(const CaseResult& r) {
  std::string s = std::string(disposition_name(r.disposition)) + " " + r.message;
  for (const CheckResult& c : r.checks) {
    s += "\n  " + c.name + ": " + std::string(disposition_name(c.disposition)) + " " + c.message;
  }
  return s;
}

void expect_passes(Backend& backend, const Case& c) {
  const CaseResult r = check_case(c, backend);
  EXPECT_TRUE(r.disposition == Disposition::kPassed || r.disposition == Disposition::kMistrusted)
      << c.name << " on " << backend.name() << ": " << describe(r);
}

// Forward and backward of a conv case once on zeros; the engine's algorithm() after.
StatusOr<std::string> run_conv_once(gpu::Engine& engine, const Case& c) {
  KC_ASSIGN_OR_RETURN(const ConvGeometry g, conv_geometry(c));
  const int64_t bytes = 4;  // f32 or less per element: enough for every dtype
  std::vector<gpu::DeviceBuffer> b;
  for (const Dims& d :
       {g.x_shape(), g.w_shape(), g.b_shape(), g.y_shape(), g.y_shape(), g.x_shape(), g.w_shape(), g.b_shape()}) {
    KC_ASSIGN_OR_RETURN(gpu::DeviceBuffer buf, gpu::DeviceBuffer::allocate(element_count(d) * bytes, "t"));
    KC_RETURN_IF_ERROR(buf.fill(0));
    b.push_back(std::move(buf));
  }
  gpu::ConvIO io{b[0].data(), b[1].data(), g.bias ? b[2].data() : nullptr, b[4].data(), b[3].data(),
                 b[5].data(), b[6].data(), g.bias ? b[7].data() : nullptr};
  const bool relu = std::holds_alternative<ConvBiasReluParams>(c.op);
  KC_RETURN_IF_ERROR(engine.conv_forward(g, c.dtype, relu, io));
  KC_RETURN_IF_ERROR(engine.conv_backward(g, c.dtype, relu, io));
  return engine.algorithm();
}

// cuda (the CUTLASS engine where it applies) and cuda.direct (our kernels only).
TEST(GpuDevice, CudaAndCudaDirectPassEveryCheck) {
  KC_REQUIRE_DEVICE();
  for (auto make : {&gpu::make_cuda_backend, &gpu::make_cuda_direct_backend}) {
    for (const Case& c : gpu_test::cuda_cases()) {
      auto backend = make();
      ASSERT_TRUE(backend->available().ok());
      expect_passes(*backend, c);
    }
  }
}

// The CUTLASS cases above did run on CUTLASS: each pass of `cuda` names its kernel, and
// the fused op's backward the pre-activation kernel (in a build with the CUTLASS
// headers; cuda.direct never does).
TEST(GpuDevice, CutlassCasesRunEachPassOnCutlass) {
  KC_REQUIRE_DEVICE();
  for (const Case& c : gpu_test::cutlass_cases()) {
    for (const char* name : {"cuda", "cuda.direct"}) {
      auto engine = gpu::make_engine(name);
      ASSERT_TRUE(engine.ok());
      const StatusOr<std::string> run = run_conv_once(**engine, c);
      ASSERT_TRUE(run.ok()) << c.name << " on " << name << ": " << run.status().to_string();
      const std::string& ran = *run;
#ifdef KC_HAVE_CUTLASS
      const bool cutlass = std::string(name) == "cuda";
#else
      const bool cutlass = false;
#endif
      // On cuda every conv pass (the fused mask too) is CUTLASS's: no direct igemm ran.
      EXPECT_EQ(ran.find("igemm") == std::string::npos, cutlass) << c.name << " on " << name << ": " << ran;
      for (const char* kernel : {"cutlass fprop", "cutlass dgrad", "cutlass wgrad"})
        EXPECT_EQ(ran.find(kernel) != std::string::npos, cutlass) << c.name << " on " << name << ": " << ran;
      if (std::holds_alternative<ConvBiasReluParams>(c.op)) {  // relu' from a recomputed f32 pre-activation
        EXPECT_EQ(ran.find("-> f32 pre-activation") != std::string::npos, cutlass) << c.name << ": " << ran;
      }
    }
  }
}

#ifdef KC_HAVE_CUDNN
TEST(GpuDevice, CudnnPassesWhatItSupports) {
  KC_REQUIRE_DEVICE();
  auto backend = gpu::make_cudnn_backend();
  if (Status s = backend->available(); !s.ok()) GTEST_SKIP() << "cudnn: " << s.message();
  int ran = 0;
  for (const Case& c : gpu_test::cuda_cases()) {
    if (!backend->supports(c).ok()) continue;
    ++ran;
    expect_passes(*backend, c);
  }
  EXPECT_GT(ran, 5);
}
#endif

// The kernels of PreparedRun are the backend's: the same inputs give the same bits.
TEST(GpuDevice, PreparedRunMatchesTheBackend) {
  KC_REQUIRE_DEVICE();
  for (const Case& c : gpu_test::cuda_cases()) {
    gpu::PreparedRun run;
    ASSERT_TRUE(run.prepare(c).ok()) << c.name;
    ASSERT_TRUE(run.run().ok()) << c.name;
    EXPECT_GT(run.seconds(), 0.0) << c.name;
    EXPECT_GT(run.peak_device_bytes(), 0) << c.name;
    auto out = run.outputs();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    auto g = op_geometry(c);
    ASSERT_TRUE(g.ok());
    auto backend = gpu::make_cuda_backend();
    const OpOutputs direct = invoke(*backend, c, *g, run.inputs(), Pass::kForward);
    ASSERT_TRUE(direct.forward.ok()) << c.name << ": " << direct.forward.to_string();
    EXPECT_TRUE(bitwise_equal(out->y, direct.y)) << c.name;
    if (direct.indices) {
      ASSERT_TRUE(out->indices.has_value()) << c.name;
      EXPECT_EQ(out->indices->data, direct.indices->data) << c.name;
    }
  }
}

TEST(GpuDevice, PreparedBackwardTimesEachPass) {
  KC_REQUIRE_DEVICE();
  const Case c = gpu_test::cuda_cases().front();
  gpu::PreparedRun run;
  ASSERT_TRUE(run.prepare(c, {"cuda", gpu::PreparedPass::kBackward, true}).ok());
  ASSERT_TRUE(run.run().ok());
  auto out = run.outputs();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->dw.size(), 4 * 3 * 9);
  EXPECT_EQ(out->db.size(), 4);
}

// A long reduction (split K) gives the same dw bits on every run in deterministic mode.
TEST(GpuDevice, DeterministicWeightGradientIsBitwiseRepeatable) {
  KC_REQUIRE_DEVICE();
  Case c = gpu_test::conv({8, 8, 8, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, test::pad_kind(PadKind::kSame)},
                          "long reduction", DType::kF32);
  gpu::PreparedRun run;
  ASSERT_TRUE(run.prepare(c, {"cuda", gpu::PreparedPass::kBackward, true}).ok());
  auto first = run.outputs();
  ASSERT_TRUE(first.ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(run.run().ok());
    auto again = run.outputs();
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(bitwise_equal(first->dw, again->dw)) << "run " << i;
    EXPECT_TRUE(bitwise_equal(first->dx, again->dx)) << "run " << i;
  }
}

TEST(GpuDevice, DeviceMemoryIsReturned) {
  KC_REQUIRE_DEVICE();
  const int64_t before = gpu::device_memory_stats().current_bytes;
  {
    auto backend = gpu::make_cuda_backend();
    expect_passes(*backend, gpu_test::cuda_cases()[1]);
  }
  EXPECT_EQ(gpu::device_memory_stats().current_bytes, before);
}

}  // namespace
}  // namespace kc
