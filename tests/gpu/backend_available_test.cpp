// The GPU backends' behaviour that holds with or without a device (labels cpu, smoke):
// registration, refusals in supports(), the unavailable path (a case is SKIPPED with
// the probe's reason, never FAILED or CRASHED), the backward-without-indices refusal,
// and the fork-safe probe that leaves the calling process without a CUDA context.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "gpu_cases.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/device.h"
#include "kc/gpu/device_buffer.h"
#include "kc/registry.h"
#include "kc/runner.h"
#include "kc/shape.h"
#include "stack/stack_exec.h"

namespace kc {
namespace {

// Must run before anything in this process touches CUDA: gtest runs tests in order of
// definition within a file, and nothing else in this binary initialises CUDA.
TEST(GpuAvailability, ProbeLeavesThisProcessWithoutCuda) {
  ASSERT_FALSE(gpu::cuda_initialised_here());
  auto d = gpu::probe_device();
  EXPECT_FALSE(gpu::cuda_initialised_here()) << "the probe must run in a child process";
  if (d.ok()) {
    EXPECT_FALSE(d->name.empty());
    EXPECT_GE(d->cc_major * 10 + d->cc_minor, gpu::min_compute_capability());
  } else {
    EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
    EXPECT_FALSE(d.status().message().empty());
  }
}

TEST(GpuAvailability, BuiltinRegistryHasTheGpuBackends) {
  const Registry r = builtin_registry();
  EXPECT_TRUE(r.contains("reference"));
  EXPECT_TRUE(r.contains("cuda"));
  EXPECT_TRUE(r.contains("cudnn"));  // without cuDNN: listed, unavailable with the reason
#ifndef KC_HAVE_CUDNN
  const Status s = r.make("cudnn")->available();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("built without cuDNN"), std::string::npos) << s.message();
#endif
}

std::vector<std::unique_ptr<Backend>> backends() {
  std::vector<std::unique_ptr<Backend>> r;
  r.push_back(gpu::make_cuda_backend());
#ifdef KC_HAVE_CUDNN
  r.push_back(gpu::make_cudnn_backend());
#endif
  return r;
}

TEST(GpuAvailability, UnavailableMeansSkippedWithTheReason) {
  for (auto& b : backends()) {
    const Status s = b->available();
    if (s.ok()) continue;  // a GPU machine: the device tests cover it
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << b->name();
    for (const Case& c : gpu_test::cuda_cases()) {
      const CaseResult r = check_case(c, *b);
      EXPECT_EQ(r.disposition, Disposition::kSkipped) << b->name() << " " << c.name << ": " << r.message;
      EXPECT_NE(r.message.find("unavailable ("), std::string::npos) << r.message;
      EXPECT_NE(r.message.find(s.message()), std::string::npos) << r.message;
    }
  }
}

TEST(GpuAvailability, RefusalsNeedNoDevice) {
  Case f64 = gpu_test::cuda_cases().front();
  f64.dtype = DType::kF64;
  Case f64_sums = gpu_test::cuda_cases().front();
  f64_sums.accumulation = DType::kF64;
  Case f16_sums = gpu_test::cuda_cases().front();
  f16_sums.dtype = DType::kF16;
  f16_sums.accumulation = DType::kF16;  // f32 sums meet the looser bound
  for (auto& b : backends()) {
    const Status s = b->supports(f64);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << b->name();
    EXPECT_NE(s.message().find("f64"), std::string::npos) << s.message();
    EXPECT_TRUE(b->supports(gpu_test::cuda_cases().front()).ok()) << b->name();
    const Status acc = b->supports(f64_sums);
    EXPECT_EQ(acc.code(), StatusCode::kUnimplemented) << b->name();
    EXPECT_NE(acc.message().find("accumulates in f32"), std::string::npos) << acc.message();
    EXPECT_TRUE(b->supports(f16_sums).ok()) << b->name() << ": " << b->supports(f16_sums).to_string();
  }
  // A stack's layers carry its accumulation, so the layer ops decline f64 sums too.
  Case stack;
  stack.dtype = DType::kF32;
  stack.accumulation = DType::kF64;
  stack.input = {1, 2, {8, 8}};
  StackParams sp;
  sp.depth = 2;
  sp.conv.out_channels = 2;
  sp.conv.kernel = {3, 3};
  stack.op = sp;
  const auto layers = stack_layers(stack);
  ASSERT_TRUE(layers.ok()) << layers.status().to_string();
  for (auto& b : backends()) {
    const Status s = stack_supports(*b, *layers);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << b->name() << ": " << s.to_string();
    EXPECT_NE(s.message().find("accumulates in f32"), std::string::npos) << s.message();
  }
#ifdef KC_HAVE_CUDNN
  auto cudnn = gpu::make_cudnn_backend();
  for (const Case& c : gpu_test::cuda_cases()) {
    const Status s = cudnn->supports(c);
    if (c.name.find("reflect") != std::string::npos) {
      EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
      EXPECT_NE(s.message().find("reflect"), std::string::npos) << s.message();
    }
    if (c.name.find("maxpool ties") != std::string::npos) {  // training mode: no argmax in cuDNN
      EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    }
  }
  // cuDNN skips the taps of its own (symmetric) zero padding, seen on an H100: a NaN or
  // infinity in w or dy that may meet one is refused; in x (never multiplied by a padded
  // tap), without padding, or with asymmetric padding (pre-padded with real zeros), not.
  auto conv1d = [](PadKind pad, int64_t kernel, const std::string& tensor, double value) {
    Case c;
    c.dtype = DType::kF32;
    c.input = {1, 1, {4}};
    ConvParams p;
    p.out_channels = 1;
    p.kernel = {kernel};
    p.padding.kind = pad;
    if (pad == PadKind::kExplicit) p.padding.pairs = {{1, 1}};
    c.op = p;
    const auto g = conv_geometry(c);
    EXPECT_TRUE(g.ok()) << g.status().to_string();
    const Dims shape = tensor == "x" ? g->x_shape() : tensor == "w" ? g->w_shape() : g->y_shape();
    c.tensors[tensor] = Tensor::zeros(DType::kF32, shape);
    c.tensors[tensor].data[0] = value;
    EXPECT_TRUE(conv_geometry(c).ok()) << conv_geometry(c).status().to_string();
    return c;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const std::string t : {"w", "dy"}) {
    const Status s = cudnn->supports(conv1d(PadKind::kExplicit, 3, t, nan));
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << t;
    EXPECT_NE(s.message().find("skips padded taps"), std::string::npos) << s.message();
    EXPECT_EQ(cudnn->supports(conv1d(PadKind::kSame, 3, t, -inf)).code(), StatusCode::kUnimplemented) << t;
    EXPECT_TRUE(cudnn->supports(conv1d(PadKind::kSame, 2, t, nan)).ok()) << t;  // SAME k2: [0, 1]
    EXPECT_TRUE(cudnn->supports(conv1d(PadKind::kValid, 3, t, nan)).ok()) << t;
    EXPECT_TRUE(cudnn->supports(conv1d(PadKind::kExplicit, 3, t, 2.0)).ok()) << t;
  }
  EXPECT_TRUE(cudnn->supports(conv1d(PadKind::kExplicit, 3, "x", nan)).ok());
#endif
}

// Tensors of 2^31 - 2^20 elements or more are refused (the kernels index with int, and
// a tile past the last element must stay below 2^31); one element fewer is supported.
// Such cases pass the harness's host-memory cap only when KC_MAX_CASE_BYTES raises it.
TEST(GpuAvailability, TensorsPastTheIndexLimitAreRefused) {
  ASSERT_EQ(setenv("KC_MAX_CASE_BYTES", "1024G", 1), 0);
  const int64_t limit = (int64_t{1} << 31) - (int64_t{1} << 20);
  Case c = gpu_test::cuda_cases().front();
  ASSERT_TRUE(std::holds_alternative<ConvParams>(c.op));
  auto& conv = std::get<ConvParams>(c.op);
  c.input = {1, 1, {limit}};  // 1-D, one channel: x has `limit` elements
  conv.kernel = {1};
  conv.stride = {1};
  conv.dilation = {1};
  conv.groups = 1;
  conv.out_channels = 1;
  conv.padding = {};
  for (auto& b : backends()) {
    const Status s = b->supports(c);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << b->name() << ": " << s.to_string();
    EXPECT_NE(s.message().find("32-bit"), std::string::npos) << s.message();
    c.input.spatial = {limit - 1};
    EXPECT_TRUE(b->supports(c).ok()) << b->name() << ": " << b->supports(c).to_string();
    c.input.spatial = {limit};
  }
  unsetenv("KC_MAX_CASE_BYTES");
}

TEST(GpuAvailability, BackwardWithoutIndicesIsRefused) {
  const Case c = gpu_test::cuda_cases()[2];  // a max pool
  auto g = pool_geometry(c);
  ASSERT_TRUE(g.ok());
  for (auto& b : backends()) {
    Tensor dy = Tensor::zeros(c.dtype, g->y_shape());
    Tensor dx = Tensor::zeros(c.dtype, g->x_shape());
    const Status s = b->maxpool_backward(*g, dy, nullptr, dx);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << b->name() << ": " << s.to_string();
  }
}

}  // namespace
}  // namespace kc
