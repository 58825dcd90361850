// The average-pool logic of the GPU backends that needs no device (labels cpu, smoke):
// the window arithmetic the CUDA kernels run (kc/gpu/pool_shape.h, AvgPoolShape) on the
// CPU against brute force and the reference (kc::ref::avgpool_*), the routing of an
// average pool to its own prepared op, and what the cuda and cudnn engines refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpu_cases.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/pool_shape.h"
#include "kc/gpu/prepared_run.h"
#include "kc/ref/avgpool.h"
#include "kc/shape.h"

namespace kc {
namespace {

using gpu::AvgPoolShape;

std::vector<Case> cases() {
  std::vector<Case> r;
  for (const auto& [name, spec] : gpu_test::avgpool_specs()) r.push_back(gpu_test::avgpool(spec, name, DType::kF32));
  return r;
}

AvgPoolGeometry geometry(const Case& c) {
  auto g = avgpool_geometry(c);
  EXPECT_TRUE(g.ok()) << c.name << ": " << g.status().to_string();
  return *g;
}

TEST(GpuAvgPool, EveryGeometryIsValid) {
  for (const Case& c : cases()) EXPECT_TRUE(avgpool_geometry(c).ok()) << c.name;
}

TEST(GpuAvgPool, ShapeCarriesTheGeometry) {
  Case c = cases()[4];  // rank 3, a divisor
  const AvgPoolGeometry g = geometry(c);
  const AvgPoolShape s = gpu::avgpool_shape(g);
  EXPECT_EQ(s.planes, 6);
  EXPECT_EQ(s.divisor, 5);
  EXPECT_TRUE(s.count_include_pad);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(s.in[d], g.spatial.dims[d].in);
    EXPECT_EQ(s.out[d], g.spatial.dims[d].out);
    EXPECT_EQ(s.pad_lo[d], g.spatial.dims[d].pad_lo);
    EXPECT_EQ(s.pad_hi[d], g.spatial.dims[d].pad_hi);
  }
  const AvgPoolShape one = gpu::avgpool_shape(geometry(cases()[0]));  // rank 1: unit outer dims
  EXPECT_EQ(one.in[0], 1);
  EXPECT_EQ(one.in[1], 1);
  EXPECT_EQ(one.in[2], 11);
  EXPECT_EQ(one.divisor, 0);
  EXPECT_FALSE(one.count_include_pad);
}

// Spans and divisor factors by enumeration of the window's positions; the windows that
// read an input are exactly those whose span holds it.
TEST(GpuAvgPool, SpansAndWindowsMatchBruteForce) {
  for (const Case& c : cases()) {
    const AvgPoolShape s = gpu::avgpool_shape(geometry(c));
    for (int d = 0; d < 3; ++d) {
      for (int o = 0; o < s.out[d]; ++o) {
        int lo = -1, hi = -1, counted = 0;
        for (int k = 0; k < s.kernel[d]; ++k) {
          const int p = o * s.stride[d] - s.pad_lo[d] + k;
          if (p >= 0 && p < s.in[d]) {
            if (lo < 0) lo = p;
            hi = p + 1;
          }
          const bool in_padded = p >= -s.pad_lo[d] && p < s.in[d] + s.pad_hi[d];
          counted += s.count_include_pad ? in_padded : (p >= 0 && p < s.in[d]);
        }
        const gpu::AvgSpan sp = gpu::avg_span(s, d, o);
        EXPECT_EQ(sp.hi - sp.lo, lo < 0 ? 0 : hi - lo) << c.name << " dim " << d << " window " << o;
        if (lo >= 0) {
          EXPECT_EQ(sp.lo, lo) << c.name;
        }
        EXPECT_EQ(sp.counted, counted) << c.name << " dim " << d << " window " << o;
      }
      for (int i = 0; i < s.in[d]; ++i) {
        std::set<int> want, got;
        for (int o = 0; o < s.out[d]; ++o) {
          const gpu::AvgSpan sp = gpu::avg_span(s, d, o);
          if (i >= sp.lo && i < sp.hi) want.insert(o);
        }
        int first = 0, last = -1;
        gpu::avg_windows_of(s, d, i, &first, &last);
        for (int o = first; o <= last; ++o) got.insert(o);
        EXPECT_EQ(got, want) << c.name << " dim " << d << " input " << i;
      }
    }
  }
}

// The kernels' per-element arithmetic (avg_window_mean, avg_input_grad) in f32 on the
// CPU against the f64 oracle: within f32 rounding of the sums of magnitudes.
TEST(GpuAvgPool, KernelArithmeticMatchesTheReference) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const Case& c : cases()) {
    const AvgPoolGeometry g = geometry(c);
    const AvgPoolShape s = gpu::avgpool_shape(g);
    Tensor x = Tensor::zeros(DType::kF32, g.x_shape()), dy = Tensor::zeros(DType::kF32, g.y_shape());
    for (double& v : x.data) v = u(rng);
    for (double& v : dy.data) v = u(rng);
    Tensor ax = x, ady = dy;
    for (double& v : ax.data) v = std::fabs(v);
    for (double& v : ady.data) v = std::fabs(v);
    const Tensor y = ref::avgpool_forward(g, x), ay = ref::avgpool_forward(g, ax);
    const Tensor dx = ref::avgpool_backward(g, dy), adx = ref::avgpool_backward(g, ady);
    const double eps = 1e-6 * s.kernel_count();
    for (int p = 0; p < s.planes; ++p) {
      for (int o = 0; o < s.out_count(); ++o) {
        int oc[3];
        gpu::unflatten3(o, s.out, oc);
        const int64_t e = static_cast<int64_t>(p) * s.out_count() + o;
        const float got = gpu::avg_window_mean(
            s, oc, [&](int i) { return static_cast<float>(x[static_cast<int64_t>(p) * s.in_count() + i]); });
        EXPECT_NEAR(got, y[e], eps * ay[e] + 1e-30) << c.name << " y[" << e << "]";
      }
      for (int i = 0; i < s.in_count(); ++i) {
        int ic[3];
        gpu::unflatten3(i, s.in, ic);
        const int64_t e = static_cast<int64_t>(p) * s.in_count() + i;
        const float got = gpu::avg_input_grad(
            s, ic, [&](int o) { return static_cast<float>(dy[static_cast<int64_t>(p) * s.out_count() + o]); });
        EXPECT_NEAR(got, dx[e], eps * adx[e] + 1e-30) << c.name << " dx[" << e << "]";
      }
    }
  }
}

// An average pool is prepared as its own ops, never as a convolution's.
TEST(GpuAvgPool, PreparedRunRoutesToTheAvgPoolOps) {
  const Case c = cases()[1];
  auto f = gpu::bench_op_for(c, gpu::PreparedPass::kForward);
  auto b = gpu::bench_op_for(c, gpu::PreparedPass::kBackward);
  ASSERT_TRUE(f.ok() && b.ok());
  EXPECT_EQ(*f, BenchOp::kAvgPoolForward);
  EXPECT_EQ(*b, BenchOp::kAvgPoolBackward);
}

Case by_name(const std::string& name) {
  for (const Case& c : cases()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no case " << name;
  return {};
}

TEST(GpuAvgPool, CudaSupportsEveryGeometryButF64) {
  auto cuda = gpu::make_cuda_backend();
  for (const Case& c : cases()) EXPECT_TRUE(cuda->supports(c).ok()) << c.name << ": " << cuda->supports(c).message();
  Case f64 = cases()[0];
  f64.dtype = DType::kF64;
  const Status s = cuda->supports(f64);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("f64"), std::string::npos) << s.message();
}

#ifdef KC_HAVE_CUDNN
void expect_refused(const Backend& b, const Case& c, const std::string& field) {
  const Status s = b.supports(c);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << c.name << ": " << s.to_string();
  EXPECT_NE(s.message().find(field), std::string::npos) << c.name << ": " << s.message();
}

TEST(GpuAvgPool, CudnnRefusesWhatCudnnDoesNotCompute) {
  auto cudnn = gpu::make_cudnn_backend();
  EXPECT_TRUE(cudnn->supports(by_name("avgpool1d exclude")).ok());       // ceil_mode, yet floor's extent
  EXPECT_TRUE(cudnn->supports(by_name("avgpool2d include asym")).ok());  // pre-padded with zeros
  EXPECT_TRUE(cudnn->supports(by_name("avgpool2d sparse")).ok());
  expect_refused(*cudnn, by_name("avgpool2d ceil include"), "avgpool.ceil_mode");
  expect_refused(*cudnn, by_name("avgpool3d ceil exclude"), "avgpool.ceil_mode");
  expect_refused(*cudnn, by_name("avgpool3d divisor"), "avgpool.divisor");
  // Uncounted asymmetric padding without ceil_mode: the padding is what is refused.
  gpu_test::AvgSpec asym{{8, 7}, {3, 2}, {1, 2}, {{2, 1}, {0, 1}}, false, false, std::nullopt};
  expect_refused(*cudnn, gpu_test::avgpool(asym, "exclude asym", DType::kF32), "avgpool.padding");
  asym.pads = {{1, 1}, {1, 1}};
  EXPECT_TRUE(cudnn->supports(gpu_test::avgpool(asym, "exclude sym", DType::kF16)).ok());
  Case f64 = by_name("avgpool2d sparse");
  f64.dtype = DType::kF64;
  expect_refused(*cudnn, f64, "f64");
}
#endif

}  // namespace
}  // namespace kc
