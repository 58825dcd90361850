// Average pooling on a device (label gpu): the cuda backend and the cudnn peer against
// the oracle (kc::ref::avgpool_forward / avgpool_backward) on every geometry of
// gpu_cases.h in f32, f16 and bf16, the cuda backward's bits on repeated runs, and the
// prepared op's outputs against the backend's. Without a usable device every test is
// skipped with the device probe's reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_cases.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/prepared_run.h"
#include "kc/ref/avgpool.h"
#include "kc/shape.h"
#include "require_device.h"

namespace kc {
namespace {

Tensor random_tensor(DType dtype, const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Tensor t = Tensor::zeros(DType::kF64, shape);
  for (double& v : t.data) v = u(rng);
  t.round_to_dtype(dtype);
  return t;
}

// |got - want| within the f32 sums' rounding (a term per window element) and one
// rounding to the storage dtype, both relative to the sum of magnitudes.
void expect_close(const Tensor& got, const Tensor& want, const Tensor& magnitude, DType dtype, int64_t terms,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double bound = 2.0 * (unit_roundoff(dtype) + static_cast<double>(terms + 2) * unit_roundoff(DType::kF32));
  int reported = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]);
    if (err <= bound * magnitude[i] + 1e-30) continue;  // false for NaN
    ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i] << " (bound "
                  << bound * magnitude[i] << ")";
    if (++reported == 5) return;
  }
}

std::vector<std::unique_ptr<Backend>> backends() {
  std::vector<std::unique_ptr<Backend>> r;
  r.push_back(gpu::make_cuda_backend());
#ifdef KC_HAVE_CUDNN
  r.push_back(gpu::make_cudnn_backend());
#endif
  return r;
}

std::unique_ptr<Backend> backend_named(const std::string& name) {
#ifdef KC_HAVE_CUDNN
  if (name == "cudnn") return gpu::make_cudnn_backend();
#endif
  (void)name;
  return gpu::make_cuda_backend();
}

TEST(GpuAvgPoolDevice, ForwardAndBackwardMatchTheReference) {
  KC_REQUIRE_DEVICE();
  for (auto& backend : backends()) {
    if (Status s = backend->available(); !s.ok()) {
      std::printf("%s: %s\n", backend->name().c_str(), s.message().c_str());
      continue;
    }
    int ran = 0;
    for (const auto& [name, spec] : gpu_test::avgpool_specs()) {
      for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        const Case c = gpu_test::avgpool(spec, name, dtype);
        if (Status s = backend->supports(c); !s.ok()) {
          EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << backend->name() << " " << name << ": " << s.to_string();
          continue;
        }
        ++ran;
        auto g = avgpool_geometry(c);
        ASSERT_TRUE(g.ok()) << g.status().to_string();
        const std::string what = backend->name() + " " + name + " " + std::string(dtype_name(dtype));
        const int64_t terms = g->spatial.kernel_count();
        const Tensor x = random_tensor(dtype, g->x_shape(), 3);
        Tensor y = Tensor::zeros(dtype, g->y_shape());
        ASSERT_TRUE(backend->avgpool_forward(*g, x, y).ok()) << what;
        expect_close(y, ref::avgpool_forward(*g, x), ref::avgpool_forward(*g, absolute(x)), dtype, terms, what + " y");
        const Tensor dy = random_tensor(dtype, g->y_shape(), 5);
        Tensor dx = Tensor::zeros(dtype, g->x_shape());
        ASSERT_TRUE(backend->avgpool_backward(*g, dy, dx).ok()) << what;
        expect_close(dx, ref::avgpool_backward(*g, dy), ref::avgpool_backward(*g, absolute(dy)), dtype, terms,
                     what + " dx");
      }
    }
    EXPECT_GT(ran, backend->name() == "cuda" ? 17 : 5) << backend->name();
  }
}

// The gather adds in a fixed order: the same dy gives the same dx bits on every run.
TEST(GpuAvgPoolDevice, CudaBackwardIsBitwiseRepeatable) {
  KC_REQUIRE_DEVICE();
  const auto specs = gpu_test::avgpool_specs();
  const Case c = gpu_test::avgpool(specs[1].second, specs[1].first, DType::kF16);  // overlapping windows
  auto g = avgpool_geometry(c);
  ASSERT_TRUE(g.ok());
  auto backend = gpu::make_cuda_backend();
  const Tensor dy = random_tensor(DType::kF16, g->y_shape(), 9);
  Tensor first = Tensor::zeros(DType::kF16, g->x_shape());
  ASSERT_TRUE(backend->avgpool_backward(*g, dy, first).ok());
  for (int i = 0; i < 5; ++i) {
    Tensor again = Tensor::zeros(DType::kF16, g->x_shape());
    ASSERT_TRUE(backend->avgpool_backward(*g, dy, again).ok());
    EXPECT_EQ(again.data, first.data) << "run " << i;
  }
}

// The prepared ops (the bench's) run the backend's kernels: the same bits.
TEST(GpuAvgPoolDevice, PreparedOpsMatchTheBackend) {
  KC_REQUIRE_DEVICE();
  for (const char* engine : {"cuda", "cudnn"}) {
#ifndef KC_HAVE_CUDNN
    if (std::string(engine) == "cudnn") continue;
#endif
    const auto specs = gpu_test::avgpool_specs();
    const Case c = gpu_test::avgpool(specs[1].second, specs[1].first, DType::kF32);
    auto g = avgpool_geometry(c);
    ASSERT_TRUE(g.ok());
    for (gpu::PreparedPass pass : {gpu::PreparedPass::kForward, gpu::PreparedPass::kBackward}) {
      gpu::PreparedRun run;
      const Status s = run.prepare(c, {engine, pass, true});
      if (s.code() == StatusCode::kUnavailable) continue;  // no cuDNN library here
      ASSERT_TRUE(s.ok()) << engine << ": " << s.to_string();
      ASSERT_TRUE(run.run().ok()) << engine;
      auto out = run.outputs();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      auto backend = backend_named(engine);
      if (pass == gpu::PreparedPass::kForward) {
        Tensor y = Tensor::zeros(c.dtype, g->y_shape());
        ASSERT_TRUE(backend->avgpool_forward(*g, run.inputs().x, y).ok());
        EXPECT_EQ(out->y.data, y.data) << engine;
      } else {
        Tensor dx = Tensor::zeros(c.dtype, g->x_shape());
        ASSERT_TRUE(backend->avgpool_backward(*g, run.inputs().dy, dx).ok());
        EXPECT_EQ(out->dx.data, dx.data) << engine;
      }
    }
  }
}

}  // namespace
}  // namespace kc
