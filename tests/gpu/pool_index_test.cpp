// The max-pool index logic of the CUDA kernels (kc/gpu/pool_shape.h) on the CPU: the
// compact argmax offset encoding and its expansion, the window enumeration of the
// gather backward, and the choice rule, each against brute force or the reference
// (kc::ref::maxpool_*) with ties, NaN and -inf in the data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "kc/gpu/pool_shape.h"
#include "kc/ref/maxpool.h"
#include "kc/shape.h"
#include "support/case_builders.h"

namespace kc {
namespace {

using gpu::PoolShape;

Case pool_case(Dims spatial, Dims kernel, Dims stride, Dims dilation, PadSpec pad, bool ceil_mode, TieRule tie) {
  Case c;
  c.dtype = DType::kF32;
  c.input = InputSpec{2, 2, std::move(spatial)};
  MaxPoolParams p;
  p.kernel = std::move(kernel);
  p.stride = std::move(stride);
  p.dilation = std::move(dilation);
  p.padding = std::move(pad);
  p.ceil_mode = ceil_mode;
  p.tie = tie;
  c.op = p;
  return c;
}

PoolGeometry geometry(const Case& c) {
  auto g = pool_geometry(c);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return *g;
}

std::vector<Case> shapes() {
  using test::explicit_pad;
  return {
      pool_case({9}, {3}, {2}, {1}, explicit_pad({{1, 1}}), false, TieRule::kFirst),
      pool_case({7, 8}, {3, 2}, {1, 2}, {2, 1}, explicit_pad({{2, 1}, {0, 1}}), true, TieRule::kLast),
      pool_case({5, 6}, {2, 2}, {1, 1}, {1, 1}, explicit_pad({{0, 0}, {0, 0}}), false, TieRule::kFirst),
      pool_case({4, 5, 6}, {2, 3, 2}, {2, 1, 2}, {1, 1, 2}, explicit_pad({{1, 0}, {1, 1}, {0, 1}}), true,
                TieRule::kLast),
      pool_case({5, 4, 6}, {3, 2, 2}, {1, 1, 1}, {1, 2, 1}, explicit_pad({{1, 1}, {0, 1}, {1, 0}}), false,
                TieRule::kFirst),  // windows overlap along every dim
  };
}

TEST(GpuPoolIndex, OffsetWidthAndSentinel) {
  EXPECT_EQ(gpu::offset_bytes_for(1), 1);
  EXPECT_EQ(gpu::offset_bytes_for(254), 1);  // 0..253 plus the sentinel 255
  EXPECT_EQ(gpu::offset_bytes_for(255), 2);  // offset 254 would be fine, 255 is reserved: be strict
  EXPECT_EQ(gpu::offset_bytes_for(65534), 2);
  EXPECT_EQ(gpu::offset_bytes_for(65535), 0);  // refused by supports()
  EXPECT_EQ(gpu::offset_sentinel(1), 0xFF);
  EXPECT_EQ(gpu::offset_sentinel(2), 0xFFFF);
}

// Every tap round-trips offset -> plane index -> offset; nothing else maps to an offset.
TEST(GpuPoolIndex, OffsetsAndIndicesRoundTrip) {
  for (const Case& c : shapes()) {
    const PoolShape s = gpu::pool_shape(geometry(c));
    for (int o = 0; o < s.out_count(); ++o) {
      std::set<int64_t> taps;
      for (int k = 0; k < s.kernel_count(); ++k) {
        const int64_t i = gpu::offset_to_index(s, o, k);
        if (i < 0) continue;
        ASSERT_LT(i, s.in_count());
        EXPECT_EQ(gpu::index_to_offset(s, o, i), k) << "output " << o << " tap " << k;
        taps.insert(i);
      }
      EXPECT_FALSE(taps.empty()) << "window " << o << " has no input tap";
      for (int64_t i = -2; i < s.in_count() + 2; ++i) {
        if (!taps.count(i)) {
          EXPECT_EQ(gpu::index_to_offset(s, o, i), -1) << "output " << o << " index " << i;
        }
      }
    }
  }
}

// for_each_window_of lists exactly the (window, tap) pairs on input i, windows ascending.
TEST(GpuPoolIndex, WindowsOfAnInputMatchBruteForce) {
  for (const Case& c : shapes()) {
    const PoolShape s = gpu::pool_shape(geometry(c));
    for (int i = 0; i < s.in_count(); ++i) {
      std::vector<std::pair<int, int>> want, got;
      for (int o = 0; o < s.out_count(); ++o) {
        for (int k = 0; k < s.kernel_count(); ++k) {
          if (gpu::offset_to_index(s, o, k) == i) want.emplace_back(o, k);
        }
      }
      int ic[3];
      gpu::unflatten3(i, s.in, ic);
      gpu::for_each_window_of(s, ic, [&](int o, int k) { got.emplace_back(o, k); });
      EXPECT_EQ(got, want) << "input " << i;  // want is in ascending o by construction
    }
  }
}

// The forward kernel's scan (maxpool_forward.cu) and the gather backward
// (maxpool_backward.cu) on the CPU, against the reference.
struct CpuPool {
  std::vector<double> y;
  std::vector<int> offsets;
  std::vector<int64_t> indices;
};

CpuPool cpu_forward(const PoolShape& s, bool tie_last, const Tensor& x) {
  CpuPool r;
  for (int plane = 0; plane < s.planes; ++plane) {
    for (int o = 0; o < s.out_count(); ++o) {
      int oc[3];
      gpu::unflatten3(o, s.out, oc);
      bool have = false;
      float best = 0.f;
      int best_k = -1, best_i = -1;
      for (int k = 0; k < s.kernel_count(); ++k) {
        int kc[3];
        gpu::unflatten3(k, s.kernel, kc);
        const int i = s.tap(oc, kc);
        if (i < 0) continue;
        const float v = static_cast<float>(x[static_cast<int64_t>(plane) * s.in_count() + i]);
        if (gpu::pool_replaces(have, best, v, tie_last)) {
          have = true;
          best = v;
          best_k = k;
          best_i = i;
        }
      }
      r.y.push_back(best);
      r.offsets.push_back(best_k);
      r.indices.push_back(gpu::offset_to_index(s, o, best_k));
      EXPECT_EQ(r.indices.back(), best_i);
    }
  }
  return r;
}

Tensor cpu_backward(const PoolShape& s, const std::vector<int>& offsets, const Tensor& dy, const Dims& x_shape) {
  Tensor dx = Tensor::zeros(DType::kF64, x_shape);
  for (int plane = 0; plane < s.planes; ++plane) {
    const int64_t base = static_cast<int64_t>(plane) * s.out_count();
    for (int i = 0; i < s.in_count(); ++i) {
      int ic[3];
      gpu::unflatten3(i, s.in, ic);
      double sum = 0.0;
      gpu::for_each_window_of(s, ic, [&](int o, int k) {
        if (offsets[static_cast<size_t>(base + o)] == k) sum += dy[base + o];
      });
      dx[static_cast<int64_t>(plane) * s.in_count() + i] = sum;
    }
  }
  return dx;
}

// Values from a small set (many ties), with NaN and -inf sprinkled in.
Tensor tricky(const Dims& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t = Tensor::zeros(DType::kF32, shape);
  const double choices[] = {
      -1.0, 0.0, 0.5, 2.0, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  for (double& v : t.data) {
    const auto r = rng() % 40;
    v = r < 36 ? choices[r % 4] : choices[4 + r % 2];
  }
  return t;
}

TEST(GpuPoolIndex, ScanAndGatherMatchTheReference) {
  uint64_t seed = 1;
  for (Case c : shapes()) {
    for (TieRule tie : {TieRule::kFirst, TieRule::kLast}) {
      std::get<MaxPoolParams>(c.op).tie = tie;
      const PoolGeometry g = geometry(c);
      const PoolShape s = gpu::pool_shape(g);
      const Tensor x = tricky(g.x_shape(), seed++);
      const CpuPool got = cpu_forward(s, tie == TieRule::kLast, x);
      const ref::PoolForward want = ref::maxpool_forward(g, x);
      ASSERT_TRUE(want.indices.has_value());
      ASSERT_EQ(got.indices, want.indices->data) << "tie " << tie_rule_name(tie);
      for (int64_t i = 0; i < want.y.size(); ++i) {
        if (std::isnan(want.y[i])) {
          EXPECT_TRUE(std::isnan(got.y[static_cast<size_t>(i)]));
        } else {
          EXPECT_EQ(got.y[static_cast<size_t>(i)], want.y[i]);
        }
      }
      std::mt19937_64 rng(seed++);
      Tensor dy = Tensor::zeros(DType::kF64, g.y_shape());
      for (double& v : dy.data) v = static_cast<double>(rng() % 7) - 3.0;  // integers: sums exact
      const Tensor dx = cpu_backward(s, got.offsets, dy, g.x_shape());
      auto ref_dx = ref::maxpool_backward(g, dy, want.indices);
      ASSERT_TRUE(ref_dx.ok());
      EXPECT_EQ(dx.data, ref_dx->data);
    }
  }
}

TEST(GpuPoolIndex, ChoiceRule) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(gpu::pool_replaces(false, 0.f, -inf, false));  // the first input tap is always taken
  EXPECT_FALSE(gpu::pool_replaces(true, 1.f, 1.f, false));   // first keeps the earlier tie
  EXPECT_TRUE(gpu::pool_replaces(true, 1.f, 1.f, true));     // last moves
  EXPECT_TRUE(gpu::pool_replaces(true, 5.f, nan, false));    // NaN beats every number
  EXPECT_FALSE(gpu::pool_replaces(true, nan, 5.f, true));
  EXPECT_FALSE(gpu::pool_replaces(true, nan, nan, false));
  EXPECT_TRUE(gpu::pool_replaces(true, nan, nan, true));
  EXPECT_FALSE(gpu::pool_replaces(true, -inf, -inf, false));  // an all -inf window keeps its first
  EXPECT_TRUE(gpu::pool_replaces(true, -inf, -inf, true));    // ... and moves to its last under tie last
  EXPECT_TRUE(gpu::pool_replaces(true, -inf, -3.f, true));
  EXPECT_TRUE(gpu::pool_replaces(true, -FLT_MAX, -FLT_MAX, true));  // the lowest finite value ties as usual
}

}  // namespace
}  // namespace kc
