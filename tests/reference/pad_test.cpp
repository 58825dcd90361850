// Padding modes worked by hand, and pad_adjoint proven to be the adjoint of pad.
#include <gtest/gtest.h>

#include "kc/ref/pad.h"
#include "support/test_support.h"

namespace kc::ref {
namespace {

DimGeometry dim(int64_t in, int64_t lo, int64_t hi) { return DimGeometry{in, 1, 1, 1, lo, hi, 1}; }

std::vector<int64_t> sources(const DimGeometry& d, PaddingMode m) {
  std::vector<int64_t> r;
  for (int64_t p = 0; p < d.padded(); ++p) r.push_back(pad_source(p, d, m));
  return r;
}

// Input a b c d (indices 0..3) padded by 2 on each side.
TEST(PadSource, ZerosLeaveGaps) {
  EXPECT_EQ(sources(dim(4, 2, 2), PaddingMode::kZeros), (std::vector<int64_t>{-1, -1, 0, 1, 2, 3, -1, -1}));
}
TEST(PadSource, ReflectDoesNotRepeatTheEdge) {  // c b | a b c d | c b
  EXPECT_EQ(sources(dim(4, 2, 2), PaddingMode::kReflect), (std::vector<int64_t>{2, 1, 0, 1, 2, 3, 2, 1}));
}
TEST(PadSource, ReplicateClampsToTheEdge) {  // a a | a b c d | d d
  EXPECT_EQ(sources(dim(4, 2, 2), PaddingMode::kReplicate), (std::vector<int64_t>{0, 0, 0, 1, 2, 3, 3, 3}));
}
TEST(PadSource, CircularWraps) {  // c d | a b c d | a b, and a full wrap with pad == in
  EXPECT_EQ(sources(dim(4, 2, 2), PaddingMode::kCircular), (std::vector<int64_t>{2, 3, 0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(sources(dim(3, 3, 1), PaddingMode::kCircular), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
}
TEST(PadSource, AsymmetricPadding) {
  EXPECT_EQ(sources(dim(3, 0, 2), PaddingMode::kReflect), (std::vector<int64_t>{0, 1, 2, 1, 0}));
}

SpatialGeometry geometry_2d() {
  SpatialGeometry g;
  g.dims = {dim(3, 1, 2), dim(4, 2, 0)};
  return g;
}

TEST(Pad, TwoDimensionalReflectByHand) {
  SpatialGeometry g;
  g.dims = {dim(2, 1, 0), dim(2, 0, 1)};
  Tensor x = Tensor::zeros(DType::kF64, {1, 1, 2, 2});
  x.data = {1, 2, 3, 4};  // rows [1 2], [3 4]
  const Tensor xp = pad(x, g, PaddingMode::kReflect);
  EXPECT_EQ(xp.shape, (Dims{1, 1, 3, 3}));
  EXPECT_EQ(xp.data, (std::vector<double>{3, 4, 3, 1, 2, 1, 3, 4, 3}));
}

TEST(Pad, AdjointIdentityInEveryMode) {
  std::mt19937_64 rng(11);
  const SpatialGeometry g = geometry_2d();
  for (PaddingMode m : {PaddingMode::kZeros, PaddingMode::kReflect, PaddingMode::kReplicate, PaddingMode::kCircular}) {
    const Tensor x = test::integer_tensor({2, 3, 3, 4}, rng, -9, 9);
    const Tensor xp = pad(x, g, m);
    const Tensor v = test::integer_tensor(xp.shape, rng, -9, 9);
    // <pad(x), v> == <x, pad_adjoint(v)>, exact in integers.
    EXPECT_EQ(test::dot(xp, v), test::dot(x, pad_adjoint(v, g, m))) << padding_mode_name(m);
  }
}

TEST(Pad, AdjointSendsEveryCopyBackToItsSource) {
  SpatialGeometry g;
  g.dims = {dim(4, 2, 2)};
  const Tensor ones = Tensor::filled(DType::kF64, {1, 1, 8}, 1.0);
  // Each input element receives one count per padded position that copies it.
  EXPECT_EQ(pad_adjoint(ones, g, PaddingMode::kReplicate).data, (std::vector<double>{3, 1, 1, 3}));
  EXPECT_EQ(pad_adjoint(ones, g, PaddingMode::kReflect).data, (std::vector<double>{1, 3, 3, 1}));
  EXPECT_EQ(pad_adjoint(ones, g, PaddingMode::kCircular).data, (std::vector<double>{2, 2, 2, 2}));
  EXPECT_EQ(pad_adjoint(ones, g, PaddingMode::kZeros).data, (std::vector<double>{1, 1, 1, 1}));
}

}  // namespace
}  // namespace kc::ref
