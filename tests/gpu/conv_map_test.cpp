// The implicit-GEMM index maps of the conv kernels (kc/gpu/conv_shape.h), run on the CPU
// in f64 over every (group, m, n, k) and compared with the reference convolution: the
// same arithmetic the CUDA kernels do, proven without a GPU. Also the pre-padded path
// of the non-zero padding modes (ref::pad, then the maps with pad 0, then the fold over
// pad_copies_of) against the reference's own handling of the modes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kc/gpu/conv_shape.h"
#include "kc/gpu/pad_map.h"
#include "kc/ref/conv.h"
#include "kc/ref/pad.h"
#include "kc/shape.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc {
namespace {

using gpu::BackwardDataMap;
using gpu::BackwardWeightMap;
using gpu::ConvShape;
using gpu::ForwardMap;
using test::ConvSpec;
using test::explicit_pad;

// C = A * B through the map, every C element written exactly once.
template <class Map>
Tensor cpu_gemm(const Map& map, int groups, const Tensor& a, const Tensor& b, const Dims& c_shape) {
  Tensor c = Tensor::filled(DType::kF64, c_shape, std::numeric_limits<double>::quiet_NaN());
  std::vector<int> writes(static_cast<size_t>(c.size()), 0);
  for (int g = 0; g < groups; ++g) {
    for (int m = 0; m < map.m_size(); ++m) {
      for (int n = 0; n < map.n_size(); ++n) {
        double acc = 0.0;
        for (int k = 0; k < map.k_size(); ++k) {
          const int ia = map.a_index(g, m, k), ib = map.b_index(g, k, n);
          EXPECT_LT(ia, a.size());
          EXPECT_LT(ib, b.size());
          if (ia >= 0 && ib >= 0) acc += a[ia] * b[ib];
        }
        const int ic = map.c_index(g, m, n);
        EXPECT_GE(ic, 0);
        EXPECT_LT(ic, c.size());
        if (ic < 0 || ic >= c.size()) continue;
        ++writes[static_cast<size_t>(ic)];
        c[ic] = acc;
      }
    }
  }
  for (size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], 1) << "C element " << i;
  return c;
}

// The fold kernel's loop (pad.cu) on the CPU.
Tensor cpu_fold(const gpu::PadShape& p, const Tensor& dxp, const Dims& x_shape) {
  Tensor dx = Tensor::zeros(DType::kF64, x_shape);
  for (int plane = 0; plane < p.planes; ++plane) {
    for (int e = 0; e < p.in_count(); ++e) {
      int i[3];
      gpu::unflatten3(e, p.in, i);
      gpu::PadRanges r[3];
      for (int d = 0; d < 3; ++d) r[d] = gpu::pad_copies_of(p.mode, i[d], p.in[d], p.lo[d], p.padded[d]);
      double sum = 0.0;
      for (int a = 0; a < r[0].count; ++a)
        for (int p0 = r[0].begin[a]; p0 < r[0].end[a]; ++p0)
          for (int b = 0; b < r[1].count; ++b)
            for (int p1 = r[1].begin[b]; p1 < r[1].end[b]; ++p1)
              for (int c = 0; c < r[2].count; ++c)
                for (int p2 = r[2].begin[c]; p2 < r[2].end[c]; ++p2)
                  sum +=
                      dxp[static_cast<int64_t>(plane) * p.padded_count() + (p0 * p.padded[1] + p1) * p.padded[2] + p2];
      dx[static_cast<int64_t>(plane) * p.in_count() + e] = sum;
    }
  }
  return dx;
}

void expect_close(const Tensor& got, const Tensor& want, const char* what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  for (int64_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-12 * (1.0 + std::abs(want[i]))) << what << " element " << i;
  }
}

struct Inputs {
  Tensor x, w, dy;
};

Inputs random_inputs(const ConvGeometry& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return {test::random_tensor(DType::kF64, g.x_shape(), rng), test::random_tensor(DType::kF64, g.w_shape(), rng),
          test::random_tensor(DType::kF64, g.y_shape(), rng)};
}

ConvGeometry geometry(const ConvSpec& spec) {
  auto g = conv_geometry(test::conv_case(spec));
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return *g;
}

// The three passes with zero padding handled by the maps themselves.
void check_zero_padding(const ConvSpec& spec, uint64_t seed) {
  const ConvGeometry g = geometry(spec);
  const Inputs in = random_inputs(g, seed);
  const ConvShape s = gpu::conv_shape(g, false);
  const int groups = static_cast<int>(g.groups);
  expect_close(cpu_gemm(ForwardMap{s}, groups, in.x, in.w, g.y_shape()), ref::conv_forward(g, in.x, in.w, nullptr),
               "y");
  expect_close(cpu_gemm(BackwardDataMap{s}, groups, in.dy, in.w, g.x_shape()), ref::conv_backward_data(g, in.dy, in.w),
               "dx");
  expect_close(cpu_gemm(BackwardWeightMap{s}, groups, in.dy, in.x, g.w_shape()),
               ref::conv_backward_weight(g, in.x, in.dy), "dw");
}

// The pre-padded path: xp, the maps with pad 0, and the fold of the padded gradient.
void check_prepadded(const ConvSpec& spec, uint64_t seed) {
  const ConvGeometry g = geometry(spec);
  const Inputs in = random_inputs(g, seed);
  const Tensor xp = ref::pad(in.x, g.spatial, g.mode);
  const ConvShape s = gpu::conv_shape(g, true);
  const gpu::PadShape p = gpu::pad_shape(g);
  const int groups = static_cast<int>(g.groups);
  expect_close(cpu_gemm(ForwardMap{s}, groups, xp, in.w, g.y_shape()), ref::conv_forward(g, in.x, in.w, nullptr), "y");
  const Tensor dxp = cpu_gemm(BackwardDataMap{s}, groups, in.dy, in.w, xp.shape);
  expect_close(cpu_fold(p, dxp, g.x_shape()), ref::conv_backward_data(g, in.dy, in.w), "dx");
  expect_close(cpu_gemm(BackwardWeightMap{s}, groups, in.dy, xp, g.w_shape()),
               ref::conv_backward_weight(g, in.x, in.dy), "dw");
}

TEST(GpuConvMap, Conv1dStrideAsymmetricPadding) {
  check_zero_padding({2, 3, 4, 1, {11}, {3}, {2}, {1}, explicit_pad({{1, 2}})}, 1);
}

TEST(GpuConvMap, Conv1dStrideLargerThanKernel) {  // holes that no window covers
  check_zero_padding({1, 2, 3, 1, {10}, {2}, {3}, {1}, explicit_pad({{0, 0}})}, 2);
}

TEST(GpuConvMap, Conv2dGroupsDilationStride) {
  check_zero_padding({2, 4, 6, 2, {7, 6}, {3, 2}, {1, 2}, {2, 1}, explicit_pad({{2, 0}, {1, 1}})}, 3);
}

TEST(GpuConvMap, Conv2dDepthwiseSame) {
  check_zero_padding({2, 3, 6, 3, {5, 6}, {3, 4}, {2, 1}, {1, 1}, test::pad_kind(PadKind::kSame)}, 4);
}

TEST(GpuConvMap, Conv2dSameLowerEvenKernel) {
  check_zero_padding({1, 2, 2, 1, {6, 5}, {4, 2}, {2, 2}, {1, 1}, test::pad_kind(PadKind::kSameLower)}, 5);
}

TEST(GpuConvMap, Conv3dMixed) {
  check_zero_padding({1, 2, 4, 2, {4, 5, 3}, {2, 3, 2}, {2, 1, 1}, {1, 1, 2}, explicit_pad({{1, 0}, {0, 2}, {1, 1}})},
                     6);
}

TEST(GpuConvMap, PrepaddedReflect) {
  ConvSpec s{2, 2, 3, 1, {5, 6}, {3, 3}, {1, 2}, {1, 1}, explicit_pad({{2, 1}, {1, 2}})};
  s.mode = PaddingMode::kReflect;
  check_prepadded(s, 7);
}

TEST(GpuConvMap, PrepaddedReplicateWidePadding) {  // replicate copies one edge many times
  ConvSpec s{1, 2, 2, 2, {4, 3}, {3, 2}, {1, 1}, {2, 1}, explicit_pad({{3, 4}, {2, 0}})};
  s.mode = PaddingMode::kReplicate;
  check_prepadded(s, 8);
}

TEST(GpuConvMap, PrepaddedCircularFullWrap) {  // pad == in: every element copied three times
  ConvSpec s{1, 1, 2, 1, {3, 4}, {3, 3}, {1, 1}, {1, 1}, explicit_pad({{3, 3}, {1, 2}})};
  s.mode = PaddingMode::kCircular;
  check_prepadded(s, 9);
}

TEST(GpuConvMap, Prepadded1dAnd3d) {
  ConvSpec a{2, 2, 2, 1, {7}, {3}, {2}, {1}, explicit_pad({{2, 1}})};
  a.mode = PaddingMode::kReflect;
  check_prepadded(a, 10);
  ConvSpec b{1, 2, 2, 1, {3, 4, 3}, {2, 2, 3}, {1, 2, 1}, {1, 1, 1}, explicit_pad({{1, 1}, {0, 1}, {2, 1}})};
  b.mode = PaddingMode::kCircular;
  check_prepadded(b, 11);
}

// tap() and tap_source() are inverses: output o sees input i through tap k exactly when
// input i is reached from o through k.
TEST(GpuConvMap, TapAndTapSourceAreInverse) {
  const ConvShape s = gpu::conv_shape(
      geometry({1, 1, 1, 1, {5, 7, 9}, {2, 3, 2}, {1, 2, 3}, {2, 1, 2}, explicit_pad({{1, 2}, {2, 0}, {0, 3}})}),
      false);
  int count = 0;
  for (int o = 0; o < s.out_count(); ++o) {
    for (int k = 0; k < s.kernel_count(); ++k) {
      int oc[3], kc[3], ic[3];
      gpu::unflatten3(o, s.out, oc);
      gpu::unflatten3(k, s.kernel, kc);
      const int i = s.tap(oc, kc);
      if (i < 0) continue;
      ++count;
      gpu::unflatten3(i, s.in, ic);
      EXPECT_EQ(s.tap_source(ic, kc), o);
    }
  }
  EXPECT_GT(count, 0);
  for (int i = 0; i < s.in_count(); ++i) {
    for (int k = 0; k < s.kernel_count(); ++k) {
      int ic[3], kc[3], oc[3];
      gpu::unflatten3(i, s.in, ic);
      gpu::unflatten3(k, s.kernel, kc);
      const int o = s.tap_source(ic, kc);
      if (o < 0) continue;
      gpu::unflatten3(o, s.out, oc);
      EXPECT_EQ(s.tap(oc, kc), i);
    }
  }
}

}  // namespace
}  // namespace kc
