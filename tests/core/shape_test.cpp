// Tests of the shape contract (kc/shape.h, docs/ops.md): output extents in floor and
// ceil mode, SAME / SAME_LOWER resolution, and resolved conv / pool geometries of rank
// 1 to 3. Expected values are worked by hand in the comments, from
//   out = floor((in + lo + hi - d(k-1) - 1) / s) + 1,   span = in + lo + hi - extent,
//   ceil_mode: ceil instead of floor, then a last window starting at or beyond in + lo
//   is dropped;  SAME: out = ceil(in/s), total = max((out-1)s + d(k-1) + 1 - in, 0).
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "kc/case.h"
#include "kc/shape.h"

namespace kc {
namespace {

Case conv_case(InputSpec in, int64_t cout, Dims kernel, Dims stride, Dims dilation, int64_t groups, PadSpec pad) {
  Case c;
  c.input = std::move(in);
  ConvParams p;
  p.out_channels = cout;
  p.kernel = std::move(kernel);
  p.stride = std::move(stride);
  p.dilation = std::move(dilation);
  p.groups = groups;
  p.padding = std::move(pad);
  c.op = p;
  return c;
}

PadSpec pads(std::vector<std::array<int64_t, 2>> pairs) { return {PadKind::kExplicit, std::move(pairs)}; }
PadSpec pad_kind(PadKind k) { return {k, {}}; }

struct ExtentRow {
  int64_t in, k, s, d, lo, hi;
  bool ceil;
  int64_t want;  // 0: empty output (the function may return any value <= 0)
  const char* why;
};

const ExtentRow kExtentTable[] = {
    // Windows are listed by their start in the padded input (padded length in+lo+hi).
    {5, 2, 2, 1, 0, 0, false, 2, "span 3: starts 0,2; start 4 would need element 5"},
    {5, 2, 2, 1, 0, 0, true, 3, "ceil(3/2)+1 = 3; start 4 < in+lo = 5 (last input elt): kept"},
    {4, 2, 2, 1, 1, 1, false, 3, "padded 6, span 4: starts 0,2,4"},
    {4, 2, 2, 1, 1, 1, true, 3, "ceil(4/2)+1 = 3; start 4 < 5: kept (covers input 3)"},
    {3, 2, 2, 1, 1, 1, false, 2, "padded 5, span 3: starts 0,2"},
    {3, 2, 2, 1, 1, 1, true, 2, "ceil(3/2)+1 = 3, but start 4 >= in+lo = 4 (right pad): dropped"},
    {4, 2, 2, 1, 0, 1, true, 2, "padded 5, span 3 -> 3; start 4 >= 4+0: dropped"},
    {6, 3, 2, 1, 1, 1, false, 3, "padded 8, span 5: floor(5/2)+1"},
    {6, 3, 2, 1, 1, 1, true, 4, "ceil(5/2)+1 = 4; start 6 < 7 (input elt 5): kept"},
    {7, 3, 2, 1, 1, 1, true, 4, "span 6 divides: ceil = floor = 4; start 6 < 8"},
    {7, 3, 2, 1, 0, 1, false, 3, "asymmetric: padded 8, span 5"},
    {10, 3, 1, 2, 0, 0, false, 6, "dilated extent 5, span 5: six windows"},
    {10, 3, 3, 2, 0, 0, true, 3, "extent 5, span 5: ceil(5/3)+1 = 3; start 6 < 10"},
    {3, 1, 5, 1, 0, 0, false, 1, "in < stride: span 2, floor(2/5)+1"},
    {3, 1, 5, 1, 0, 0, true, 1, "ceil(2/5)+1 = 2, but start 5 >= 3: dropped"},
    {1, 1, 1, 1, 0, 0, false, 1, "unit everything"},
    {2, 5, 1, 1, 1, 1, false, 0, "padded 4 < kernel 5: empty"},
    {3, 3, 1, 3, 1, 1, false, 0, "padded 5 < dilated extent 7: empty"},
    // ceil mode with a first window overhanging the padded end (span in (-s, 0)):
    // ceil(span/s)+1 = 1 (as PyTorch), and the window starts on input element 0.
    {1, 2, 2, 1, 0, 0, true, 1, "span -1, s 2: ceil(-1/2)+1 = 0+1 = 1"},
    {2, 3, 2, 1, 0, 0, true, 1, "span -1, s 2: one window over both elements"},
    {1, 3, 1, 1, 0, 0, true, 0, "span -2, s 1: ceil(-2)+1 = -1: empty"},
    {1, 2, 2, 1, 0, 0, false, 0, "floor(-1/2)+1 = 0: empty"},
};

TEST(ShapeOutputExtent, HandWorkedTable) {
  for (const ExtentRow& r : kExtentTable) {
    const int64_t got = output_extent(r.in, r.k, r.s, r.d, r.lo, r.hi, r.ceil);
    const std::string row = "in " + std::to_string(r.in) + " k " + std::to_string(r.k) + " s " + std::to_string(r.s) +
                            " d " + std::to_string(r.d) + " pad " + std::to_string(r.lo) + "/" + std::to_string(r.hi) +
                            (r.ceil ? " ceil" : " floor") + ": " + r.why;
    if (r.want == 0) {
      EXPECT_LE(got, 0) << row;
    } else {
      EXPECT_EQ(got, r.want) << row;
    }
  }
}

struct SameRow {
  int64_t in, k, s, d;
  int64_t out, lo, hi;  // `same` (SAME_UPPER); same_lower swaps lo and hi
  const char* why;
};

const SameRow kSameTable[] = {
    {17, 4, 2, 1, 9, 1, 2, "out 9, total 8*2+4-17 = 3: 1 | 2"},
    {16, 4, 2, 1, 8, 1, 1, "out 8, total 7*2+4-16 = 2"},
    {17, 3, 2, 1, 9, 1, 1, "odd kernel: total 16+3-17 = 2"},
    {10, 3, 1, 1, 10, 1, 1, "stride 1: total k-1 = 2"},
    {10, 4, 1, 1, 10, 1, 2, "even kernel stride 1: total 3"},
    {10, 2, 1, 1, 10, 0, 1, "total 1: all of it on hi"},
    {10, 3, 1, 2, 10, 2, 2, "dilation 2: extent 5, total 4"},
    {10, 3, 2, 3, 5, 2, 3, "dilation 3: extent 7, total 4*2+7-10 = 5"},
    {9, 3, 2, 2, 5, 2, 2, "out 5, extent 5: total 8+5-9 = 4"},
    {3, 1, 5, 1, 1, 0, 0, "in < stride: out 1, total 1-3 < 0 -> 0"},
    {3, 4, 5, 1, 1, 0, 1, "in < stride: out 1, total 4-3 = 1"},
    {2, 3, 4, 1, 1, 0, 1, "in < stride: total 3-2 = 1"},
    {6, 1, 3, 1, 2, 0, 0, "k 1: total 3+1-6 < 0 -> 0"},
    {1, 7, 1, 1, 1, 3, 3, "kernel wider than input: total 6"},
};

TEST(ShapeResolveSame, HandWorkedTable) {
  for (const SameRow& r : kSameTable) {
    const std::string row = "in " + std::to_string(r.in) + " k " + std::to_string(r.k) + " s " + std::to_string(r.s) +
                            " d " + std::to_string(r.d) + ": " + r.why;
    const auto upper = resolve_same(r.in, r.k, r.s, r.d, false);
    const auto lower = resolve_same(r.in, r.k, r.s, r.d, true);
    EXPECT_EQ(upper[0], r.lo) << "same lo, " << row;
    EXPECT_EQ(upper[1], r.hi) << "same hi, " << row;
    EXPECT_EQ(lower[0], r.hi) << "same_lower lo, " << row;
    EXPECT_EQ(lower[1], r.lo) << "same_lower hi, " << row;
    // The resolved padding gives back ceil(in/s) through the conv formula.
    EXPECT_EQ(output_extent(r.in, r.k, r.s, r.d, upper[0], upper[1], false), r.out) << row;
    EXPECT_EQ(output_extent(r.in, r.k, r.s, r.d, lower[0], lower[1], false), r.out) << row;
  }
}

TEST(ShapeResolvePadding, ExplicitValidAndSamePerDim) {
  const Dims in{17, 9}, k{4, 3}, s{2, 1}, d{1, 1};
  using P = std::vector<std::array<int64_t, 2>>;
  EXPECT_EQ(resolve_padding(pads({{0, 3}, {2, 1}}), in, k, s, d), (P{{0, 3}, {2, 1}}));
  EXPECT_EQ(resolve_padding(pad_kind(PadKind::kValid), in, k, s, d), (P{{0, 0}, {0, 0}}));
  EXPECT_EQ(resolve_padding(pads({}), in, k, s, d), (P{{0, 0}, {0, 0}}));
  // dim 0 as the first SAME row; dim 1: out 9, total 8+3-9 = 2.
  EXPECT_EQ(resolve_padding(pad_kind(PadKind::kSame), in, k, s, d), (P{{1, 2}, {1, 1}}));
  EXPECT_EQ(resolve_padding(pad_kind(PadKind::kSameLower), in, k, s, d), (P{{2, 1}, {1, 1}}));
}

TEST(ShapeConvGeometry, SameKeepsCeilInOverStrideEndToEnd) {
  // The example of docs/cases.md: [2, 3, 17, 9], kernel [4, 3], stride [2, 1], SAME.
  for (PadKind kind : {PadKind::kSame, PadKind::kSameLower}) {
    auto g = conv_geometry(conv_case({2, 3, {17, 9}}, 4, {4, 3}, {2, 1}, {}, 1, pad_kind(kind)));
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    EXPECT_EQ(g->y_shape(), (Dims{2, 4, 9, 9}));  // ceil(17/2) = 9, ceil(9/1) = 9
    EXPECT_EQ(g->x_shape(), (Dims{2, 3, 17, 9}));
    EXPECT_EQ(g->w_shape(), (Dims{4, 3, 4, 3}));
    const bool lower = kind == PadKind::kSameLower;
    EXPECT_EQ(g->spatial.dims[0].pad_lo, lower ? 2 : 1);
    EXPECT_EQ(g->spatial.dims[0].pad_hi, lower ? 1 : 2);
    EXPECT_EQ(g->spatial.dims[1].pad_lo, 1);
    EXPECT_EQ(g->spatial.dims[1].pad_hi, 1);
  }
}

TEST(ShapeConvGeometry, HeightAndWidthResolvedIndependently) {
  // H: in 7, k 3, s 2, pad 1/0 -> span 8-3 = 5 -> 3.
  // W: in 10, k 2, d 2 (extent 3), s 3, pad 0/2 -> padded 12, span 9 -> 4.
  auto g = conv_geometry(conv_case({1, 2, {7, 10}}, 5, {3, 2}, {2, 3}, {1, 2}, 1, pads({{1, 0}, {0, 2}})));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->y_shape(), (Dims{1, 5, 3, 4}));
  EXPECT_EQ(g->spatial.dims[1].extent(), 3);
  EXPECT_EQ(g->spatial.dims[0].padded(), 8);
  EXPECT_EQ(g->spatial.dims[1].padded(), 12);
  EXPECT_EQ(g->spatial.kernel_count(), 6);
  EXPECT_EQ(g->spatial.out_count(), 12);
}

TEST(ShapeConvGeometry, Rank1WithGroups) {
  // in 11, k 3, s 2, valid: (11-3)/2+1 = 5. Groups 2: w is [6, 4/2, 3].
  auto g = conv_geometry(conv_case({3, 4, {11}}, 6, {3}, {2}, {}, 2, pad_kind(PadKind::kValid)));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->x_shape(), (Dims{3, 4, 11}));
  EXPECT_EQ(g->w_shape(), (Dims{6, 2, 3}));
  EXPECT_EQ(g->b_shape(), (Dims{6}));
  EXPECT_EQ(g->y_shape(), (Dims{3, 6, 5}));
  EXPECT_EQ(g->in_per_group(), 2);
  EXPECT_EQ(g->out_per_group(), 3);
  EXPECT_EQ(g->reduction_length(), 6);  // Cin/G * k = 2 * 3
}

TEST(ShapeConvGeometry, Rank3DepthwiseWithUnitStrideDefaults) {
  // Empty stride/dilation mean 1; pad 1 per side keeps 5, 6, 7. Depthwise: G = Cin = 4.
  auto g = conv_geometry(conv_case({1, 4, {5, 6, 7}}, 8, {3, 3, 3}, {}, {}, 4, pads({{1, 1}, {1, 1}, {1, 1}})));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->w_shape(), (Dims{8, 1, 3, 3, 3}));
  EXPECT_EQ(g->y_shape(), (Dims{1, 8, 5, 6, 7}));
  EXPECT_EQ(g->spatial.in_count(), 210);
  EXPECT_EQ(g->spatial.padded_count(), 7 * 8 * 9);
  EXPECT_EQ(g->spatial.kernel_count(), 27);
  EXPECT_EQ(g->reduction_length(), 27);
  for (const DimGeometry& d : g->spatial.dims) {
    EXPECT_EQ(d.stride, 1);
    EXPECT_EQ(d.dilation, 1);
  }
}

TEST(ShapeConvGeometry, ConvBiasReluAlwaysHasBias) {
  Case c = conv_case({1, 2, {6, 6}}, 3, {3, 3}, {}, {}, 1, pads({}));
  c.op = ConvBiasReluParams{std::get<ConvParams>(c.op)};
  auto g = conv_geometry(c);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(g->bias);
  EXPECT_EQ(g->y_shape(), (Dims{1, 3, 4, 4}));
}

TEST(ShapePoolGeometry, StrideDefaultsToKernelAndCeilModeApplies) {
  // in 7, k 2, stride = kernel = 2: floor (7-2)/2+1 = 3; ceil 4 (start 6 < 7: kept).
  Case c;
  c.input = {2, 3, {7, 5}};
  MaxPoolParams p;
  p.kernel = {2, 2};
  c.op = p;
  auto g = pool_geometry(c);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->spatial.dims[0].stride, 2);
  EXPECT_EQ(g->y_shape(), (Dims{2, 3, 3, 2}));  // W: in 5 -> (5-2)/2+1 = 2
  EXPECT_EQ(g->x_shape(), (Dims{2, 3, 7, 5}));
  p.ceil_mode = true;
  c.op = p;
  g = pool_geometry(c);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(g->ceil_mode);
  EXPECT_EQ(g->y_shape(), (Dims{2, 3, 4, 3}));  // W: ceil(3/2)+1 = 3, start 4 < 5
}

TEST(ShapeSpatialGeometry, As3dPadsLeadingUnitDims) {
  const DimGeometry unit{};  // in = k = s = d = out = 1, no padding
  EXPECT_EQ(unit.in, 1);
  EXPECT_EQ(unit.out, 1);
  EXPECT_EQ(unit.extent(), 1);
  const DimGeometry a{11, 3, 2, 1, 1, 0, 5}, b{6, 2, 1, 2, 0, 1, 5}, c{4, 1, 1, 1, 0, 0, 4};
  SpatialGeometry g1{{a}}, g2{{a, b}}, g3{{a, b, c}};
  EXPECT_EQ(g1.as_3d(), (std::array<DimGeometry, 3>{unit, unit, a}));
  EXPECT_EQ(g2.as_3d(), (std::array<DimGeometry, 3>{unit, a, b}));
  EXPECT_EQ(g3.as_3d(), (std::array<DimGeometry, 3>{a, b, c}));
  EXPECT_EQ(g2.in_dims(), (Dims{11, 6}));
  EXPECT_EQ(g2.out_dims(), (Dims{5, 5}));
  EXPECT_EQ(g2.kernel_dims(), (Dims{3, 2}));
  EXPECT_EQ(g2.padded_count(), 12 * 7);
}

TEST(ShapeGeometry, WrongOpIsRefused) {
  Case pool_case;
  pool_case.input = {1, 1, {4, 4}};
  pool_case.op = MaxPoolParams{{2, 2}, {}, {}, {}, false, PoolMode::kTraining, TieRule::kFirst};
  auto cg = conv_geometry(pool_case);
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cg.status().message().find("got maxpool"), std::string::npos) << cg.status().message();
  auto pg = pool_geometry(conv_case({1, 1, {4, 4}}, 1, {3, 3}, {}, {}, 1, pads({})));
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(pg.status().message().find("expected a maxpool case, got conv"), std::string::npos)
      << pg.status().message();
}

TEST(ShapeGeometry, CarriesTheValidationError) {
  auto g = conv_geometry(conv_case({1, 4, {4, 4}}, 6, {3, 3}, {}, {}, 3, pads({})));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("conv.groups"), std::string::npos) << g.status().message();
  Case p;
  p.input = {1, 1, {9, 9}};
  p.op = MaxPoolParams{{3, 3}, {2, 2}, {}, pads({{2, 2}, {0, 0}}), false, PoolMode::kTraining, TieRule::kFirst};
  auto pg = pool_geometry(p);
  ASSERT_FALSE(pg.ok());
  EXPECT_NE(pg.status().message().find("maxpool.padding"), std::string::npos) << pg.status().message();
}

// --- properties -----------------------------------------------------------------------
//
// Brute force from docs/ops.md, counting window start positions o*s (o >= 0) in the padded
// input, extent = d(k-1)+1, span = in + lo + hi - extent:
//   floor: window o is counted when it fits, o*s + extent <= in + lo + hi.
//   ceil:  out = ceil(span/s) + 1 counts exactly the o with (o-1)*s < span, i.e. window
//          o is laid while the previous one, at (o-1)*s, had not yet reached the last
//          padded element: (o-1)*s + extent < in + lo + hi (o = 0: span > -s). Then
//          windows starting at or beyond in + lo (wholly in the right padding) are
//          dropped: o*s < in + lo. With pool padding <= extent/2 at most one window can
//          start there, so dropping "all such" equals the contract's "the last one".

int64_t floor_windows(int64_t in, int64_t s, int64_t extent, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t o = 0; o * s + extent <= in + lo + hi; ++o) ++n;
  return n;
}

int64_t ceil_windows(int64_t in, int64_t s, int64_t extent, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t o = 0; (o - 1) * s + extent < in + lo + hi; ++o) {
    if (o * s < in + lo) ++n;
  }
  return n;
}

RC_GTEST_PROP(ShapeProp, ConvOutputExtentMatchesWindowEnumeration, ()) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 30);
  const int64_t k = *rc::gen::inRange<int64_t>(1, 7);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 6);
  const int64_t d = *rc::gen::inRange<int64_t>(1, 4);
  const int64_t lo = *rc::gen::inRange<int64_t>(0, 7);
  const int64_t hi = *rc::gen::inRange<int64_t>(0, 7);
  const int64_t got = output_extent(in, k, s, d, lo, hi, false);
  RC_ASSERT(std::max<int64_t>(got, 0) == floor_windows(in, s, d * (k - 1) + 1, lo, hi));
}

RC_GTEST_PROP(ShapeProp, PoolOutputExtentMatchesWindowEnumeration, (bool ceil_mode)) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 30);
  const int64_t k = *rc::gen::inRange<int64_t>(1, 7);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 6);
  const int64_t d = *rc::gen::inRange<int64_t>(1, 4);
  const int64_t extent = d * (k - 1) + 1;
  const int64_t lo = *rc::gen::inRange<int64_t>(0, extent / 2 + 1);  // pool rule: <= extent/2
  const int64_t hi = *rc::gen::inRange<int64_t>(0, extent / 2 + 1);
  const int64_t got = output_extent(in, k, s, d, lo, hi, ceil_mode);
  const int64_t want = ceil_mode ? ceil_windows(in, s, extent, lo, hi) : floor_windows(in, s, extent, lo, hi);
  RC_ASSERT(std::max<int64_t>(got, 0) == want);
}

RC_GTEST_PROP(ShapeProp, SameConvKeepsCeilInOverStride, (bool lower)) {
  const int64_t rank = *rc::gen::inRange<int64_t>(1, 4);
  InputSpec in{1, 1, {}};
  Dims k, s, d;
  for (int64_t i = 0; i < rank; ++i) {
    in.spatial.push_back(*rc::gen::inRange<int64_t>(1, 20));
    k.push_back(*rc::gen::inRange<int64_t>(1, 6));
    s.push_back(*rc::gen::inRange<int64_t>(1, 5));
    d.push_back(*rc::gen::inRange<int64_t>(1, 4));
  }
  auto g = conv_geometry(conv_case(in, 2, k, s, d, 1, pad_kind(lower ? PadKind::kSameLower : PadKind::kSame)));
  RC_ASSERT(g.ok());
  for (int64_t i = 0; i < rank; ++i) {
    const DimGeometry& dim = g->spatial.dims[static_cast<size_t>(i)];
    const int64_t want_out = (in.spatial[i] + s[i] - 1) / s[i];
    RC_ASSERT(dim.out == want_out);
    RC_ASSERT(g->y_shape()[static_cast<size_t>(2 + i)] == want_out);
    // The extra padded element, if any, goes on hi for same and on lo for same_lower.
    const int64_t big = std::max(dim.pad_lo, dim.pad_hi), small = std::min(dim.pad_lo, dim.pad_hi);
    RC_ASSERT(big - small <= 1);
    RC_ASSERT((lower ? dim.pad_lo : dim.pad_hi) == big);
    // Minimal: with one padded element less, the last output is lost.
    if (dim.pad_lo + dim.pad_hi > 0) {
      const int64_t lo = dim.pad_hi > 0 ? dim.pad_lo : dim.pad_lo - 1;
      const int64_t hi = dim.pad_hi > 0 ? dim.pad_hi - 1 : dim.pad_hi;
      RC_ASSERT(output_extent(dim.in, dim.kernel, dim.stride, dim.dilation, lo, hi, false) == want_out - 1);
    }
  }
}

}  // namespace
}  // namespace kc
