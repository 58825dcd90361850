// The implicit-GEMM kernel's own per-thread steps (kc/gpu/detail/igemm_core.h) run on
// the CPU: every block of every launch of the plan, its 128 threads one after another
// between the barriers, with shared memory poisoned (NaN) before each phase so that an
// element no thread wrote shows up. f32 storage, as the device's FFMA path. Against the
// reference convolution for forward, backward-data and backward-weight (split K, both
// the deterministic partials and the accumulate-all path), plus the thread-to-tile maps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "kc/gpu/conv_shape.h"
#include "kc/gpu/detail/igemm_core.h"
#include "kc/gpu/gemm_plan.h"
#include "kc/ref/conv.h"
#include "kc/shape.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc {
namespace {

using namespace gpu;
using namespace gpu::detail;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

void poison(GemmSmem<float>& sm) {
  for (auto& row : sm.a)
    for (float& v : row) v = kNaN;
  for (auto& row : sm.b)
    for (float& v : row) v = kNaN;
  for (auto& row : sm.c)
    for (float& v : row) v = kNaN;
}

// The kernel body of igemm.cuh for every block of the plan, thread by thread.
template <class Map, class Epi>
void simulate(const Map& map, const GemmPlan& plan, const float* a, const float* b, const Epi& epi) {
  auto sm = std::make_unique<GemmSmem<float>>();
  std::vector<float> acc(kGemmThreads * 32);
  auto acc_of = [&](int tid) -> float(&)[8][4] { return *reinterpret_cast<float(*)[8][4]>(&acc[tid * 32]); };
  for (const GemmLaunch& l : plan.launches) {
    for (int bz = 0; bz < l.grid_z; ++bz) {
      for (int by = 0; by < l.grid_y; ++by) {
        for (int bx = 0; bx < l.grid_x; ++bx) {
          const GemmBlock blk = gemm_block(map, bx, by, bz, l.group_base, plan.splits, plan.k_per_split);
          std::fill(acc.begin(), acc.end(), 0.f);
          for (int k0 = blk.k_begin; k0 < blk.k_end; k0 += kTileK) {
            poison(*sm);
            for (int t = 0; t < kGemmThreads; ++t) {
              load_a_tile(map, a, 0.f, blk, k0, t, *sm);
              load_b_tile(map, b, 0.f, blk, k0, t, *sm);
            }
            for (int t = 0; t < kGemmThreads; ++t) simt_mma(*sm, t, acc_of(t));
          }
          poison(*sm);
          for (int t = 0; t < kGemmThreads; ++t) simt_store(acc_of(t), t, *sm);
          for (int t = 0; t < kGemmThreads; ++t) epilogue_tile(map, blk, t, *sm, epi);
        }
      }
    }
  }
}

std::vector<float> as_float(const Tensor& t) { return std::vector<float>(t.data.begin(), t.data.end()); }

void expect_close(const std::vector<float>& got, const Tensor& want, const char* what) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.size()) << what;
  for (int64_t i = 0; i < want.size(); ++i) {
    ASSERT_FALSE(std::isnan(got[static_cast<size_t>(i)])) << what << " element " << i << " never written";
    ASSERT_NEAR(got[static_cast<size_t>(i)], want[i], 1e-4 * (1.0 + std::abs(want[i]))) << what << " element " << i;
  }
}

struct Problem {
  ConvGeometry g;
  ConvShape s;
  Tensor x, w, dy;
};

Problem problem(const test::ConvSpec& spec, uint64_t seed) {
  auto g = conv_geometry(test::conv_case(spec));
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  Problem p{*g, conv_shape(*g, false), {}, {}, {}};
  std::mt19937_64 rng(seed);
  p.x = test::random_tensor(DType::kF32, p.g.x_shape(), rng);
  p.w = test::random_tensor(DType::kF32, p.g.w_shape(), rng);
  p.dy = test::random_tensor(DType::kF32, p.g.y_shape(), rng);
  return p;
}

void check_forward_and_data(const test::ConvSpec& spec, uint64_t seed) {
  const Problem p = problem(spec, seed);
  const std::vector<float> x = as_float(p.x), w = as_float(p.w), dy = as_float(p.dy);
  std::vector<float> y(static_cast<size_t>(p.s.y_size()), kNaN), dx(static_cast<size_t>(p.s.x_size()), kNaN);
  const ForwardMap fm{p.s};
  simulate(fm, plan_gemm(fm.m_size(), fm.n_size(), fm.k_size(), p.s.groups, 1), x.data(), w.data(),
           [&](int g, int m, int n, float v, int) { y[static_cast<size_t>(fm.c_index(g, m, n))] = v; });
  expect_close(y, ref::conv_forward(p.g, p.x, p.w, nullptr), "y");
  const BackwardDataMap dm{p.s};
  simulate(dm, plan_gemm(dm.m_size(), dm.n_size(), dm.k_size(), p.s.groups, 1), dy.data(), w.data(),
           [&](int g, int m, int n, float v, int) { dx[static_cast<size_t>(dm.c_index(g, m, n))] = v; });
  expect_close(dx, ref::conv_backward_data(p.g, p.dy, p.w), "dx");
}

// Backward-weight as conv_backward_weight.cu does it: partials per split reduced in
// split order (deterministic), or every split added into one accumulator.
void check_weight(const test::ConvSpec& spec, uint64_t seed, int min_splits) {
  const Problem p = problem(spec, seed);
  const std::vector<float> x = as_float(p.x), dy = as_float(p.dy);
  const BackwardWeightMap wm{p.s};
  const GemmPlan plan = wgrad_plan(p.s);
  ASSERT_GE(plan.splits, min_splits);
  const size_t w_size = static_cast<size_t>(p.s.w_size());
  ASSERT_EQ(static_cast<int64_t>(w_size * plan.splits), wgrad_workspace_floats(p.s, true));
  std::vector<float> partials(w_size * plan.splits, kNaN), accumulated(w_size, 0.f);
  simulate(wm, plan, dy.data(), x.data(), [&](int g, int m, int n, float v, int split) {
    const size_t idx = static_cast<size_t>(wm.c_index(g, m, n));
    partials[split * w_size + idx] = v;
    accumulated[idx] += v;
  });
  std::vector<float> dw(w_size);
  for (size_t i = 0; i < w_size; ++i) {
    float sum = 0.f;
    for (int s = 0; s < plan.splits; ++s) sum += partials[s * w_size + i];  // NaN if a split never wrote
    dw[i] = sum;
  }
  const Tensor want = ref::conv_backward_weight(p.g, p.x, p.dy);
  expect_close(dw, want, "dw (deterministic)");
  expect_close(accumulated, want, "dw (accumulated)");
}

TEST(GpuIgemmSim, ForwardAndData2d) {
  check_forward_and_data({2, 3, 70, 1, {9, 10}, {3, 3}, {1, 2}, {1, 1}, test::pad_kind(PadKind::kSame)}, 1);
}

TEST(GpuIgemmSim, ForwardAndDataGroupsStrideDilation3d) {
  check_forward_and_data(
      {1, 4, 6, 2, {5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {1, 2, 1}, test::explicit_pad({{1, 0}, {2, 1}, {0, 1}})}, 2);
}

TEST(GpuIgemmSim, ForwardAndDataDepthwise1dManyTiles) {
  check_forward_and_data({3, 5, 5, 5, {150}, {4}, {1}, {2}, test::explicit_pad({{3, 2}})}, 3);
}

TEST(GpuIgemmSim, WeightGradientSplitK) {
  check_weight({4, 3, 5, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1}, test::pad_kind(PadKind::kSame)}, 4, 8);
}

TEST(GpuIgemmSim, WeightGradientGroupsAndHoles) {
  check_weight({2, 4, 4, 2, {60, 41}, {2, 3}, {3, 2}, {2, 1}, test::explicit_pad({{0, 1}, {1, 1}})}, 5, 2);
}

// Every tile element is loaded, computed and stored by exactly one thread.
TEST(GpuIgemmSim, ThreadMapsCoverEachTileOnce) {
  for (bool major : {false, true}) {
    std::set<std::pair<int, int>> a, b;
    for (int e = 0; e < kTileM * kTileK; ++e) {
      int r, c;
      a_tile_coords(major, e, r, c);
      ASSERT_TRUE(r >= 0 && r < kTileM && c >= 0 && c < kTileK);
      a.insert({r, c});
    }
    for (int e = 0; e < kTileK * kTileN; ++e) {
      int r, c;
      b_tile_coords(major, e, r, c);
      ASSERT_TRUE(r >= 0 && r < kTileK && c >= 0 && c < kTileN);
      b.insert({r, c});
    }
    EXPECT_EQ(static_cast<int>(a.size()), kTileM * kTileK);
    EXPECT_EQ(static_cast<int>(b.size()), kTileK * kTileN);
  }
  std::set<std::pair<int, int>> simt, wmma, epi;
  for (int t = 0; t < kGemmThreads; ++t) {
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 4; ++j) {
        int m, n;
        simt_coords(t, i, j, m, n);
        simt.insert({m, n});
      }
    }
  }
  for (int warp = 0; warp < kGemmThreads / 32; ++warp) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        int m0, n0;
        wmma_fragment_origin(warp, i, j, m0, n0);
        for (int r = 0; r < 16; ++r)
          for (int c = 0; c < 16; ++c) wmma.insert({m0 + r, n0 + c});
      }
    }
  }
  for (int e = 0; e < kTileM * kTileN; ++e) {
    int m, n;
    epilogue_coords(e, m, n);
    epi.insert({m, n});
  }
  for (const auto* s : {&simt, &wmma, &epi}) {
    EXPECT_EQ(static_cast<int>(s->size()), kTileM * kTileN);
    EXPECT_EQ(s->begin()->first, 0);
    EXPECT_EQ(s->rbegin()->first, kTileM - 1);
  }
}

}  // namespace
}  // namespace kc
