// An op's cost by definition: the FLOPs of a conv against a direct loop over its
// multiply-adds, its bytes from its tensors, and a transform's largest saving.
#include "bench/op_cost.h"

#include <gtest/gtest.h>

namespace kc::bench {
namespace {

Case conv_case(int64_t groups, bool bias) {
  Case c;
  c.dtype = DType::kF32;
  c.input = {3, 4, {9, 7}};
  ConvParams p;
  p.out_channels = 6;
  p.kernel = {3, 2};
  p.stride = {2, 1};
  p.dilation = {1, 2};
  p.groups = groups;
  p.bias = bias;
  p.padding = {PadKind::kSame, {}};
  c.op = p;
  return c;
}

// Every multiply-add of the direct definition, padding taps included, counted one by one.
double direct_macs(const ConvGeometry& g) {
  double macs = 0;
  const int64_t taps = g.spatial.kernel_count(), outs = g.spatial.out_count();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t k = 0; k < g.out_channels; ++k)
      for (int64_t o = 0; o < outs; ++o)
        for (int64_t c = 0; c < g.in_per_group(); ++c)
          for (int64_t t = 0; t < taps; ++t) macs += 1;
  return macs;
}

TEST(OpCost, ConvFlopsAreTwicePerMultiplyAddOfEachPass) {
  for (int64_t groups : {1, 2}) {
    const ConvGeometry g = *conv_geometry(conv_case(groups, false));
    const double macs = direct_macs(g);
    EXPECT_DOUBLE_EQ(op_cost(g, DType::kF32, BenchOp::kConvForward).flops, 2 * macs);
    EXPECT_DOUBLE_EQ(op_cost(g, DType::kF32, BenchOp::kConvBackwardData).flops, 2 * macs);
    EXPECT_DOUBLE_EQ(op_cost(g, DType::kF32, BenchOp::kConvBackwardWeight).flops, 2 * macs);
    EXPECT_DOUBLE_EQ(op_cost(g, DType::kF32, BenchOp::kConvBackward).flops, 4 * macs);
  }
}

TEST(OpCost, BytesReadEachInputOnceAndWriteEachOutputOnce) {
  const ConvGeometry g = *conv_geometry(conv_case(1, true));
  const double x = 3 * 4 * 9 * 7, w = 6 * 4 * 3 * 2, b = 6;
  const double y = static_cast<double>(element_count(g.y_shape()));
  EXPECT_DOUBLE_EQ(op_cost(g, DType::kF32, BenchOp::kConvForward).bytes, 4 * (x + w + b + y));
  EXPECT_DOUBLE_EQ(op_cost(g, DType::kBF16, BenchOp::kConvForward).bytes, 2 * (x + w + b + y));
  EXPECT_DOUBLE_EQ(op_cost(g, DType::kF32, BenchOp::kConvBackwardBias).bytes, 4 * (y + b));
}

TEST(OpCost, PoolIndicesCountAsTheSmallestOffset) {
  Case c;
  c.dtype = DType::kF16;
  c.input = {2, 3, {8, 8}};
  MaxPoolParams p;
  p.kernel = {3, 3};
  p.stride = {2, 2};
  c.op = p;
  const PoolGeometry g = *pool_geometry(c);
  const double x = 2 * 3 * 64, y = static_cast<double>(element_count(g.y_shape()));
  EXPECT_DOUBLE_EQ(op_cost(g, DType::kF16, BenchOp::kPoolInference).bytes, 2 * (x + y));
  EXPECT_DOUBLE_EQ(op_cost(g, DType::kF16, BenchOp::kPoolTraining).bytes, 2 * (x + y) + y);
  EXPECT_DOUBLE_EQ(op_cost(g, DType::kF16, BenchOp::kPoolInference).flops, 9 * y);
}

TEST(OpCost, WinogradSavesAtMostItsMultiplications) {
  Numerics n;
  EXPECT_EQ(transform_saving(n, 2), 1.0);
  n.algorithm = Algorithm::kWinograd;
  n.transform_m = 2, n.transform_r = 3;
  EXPECT_DOUBLE_EQ(transform_saving(n, 2), 2.25);  // 36 products become 16
  n.transform_m = 4;
  EXPECT_DOUBLE_EQ(transform_saving(n, 1), 2.0);  // 12 products become 6
  n.algorithm = Algorithm::kFft;
  EXPECT_EQ(transform_saving(n, 2), 1.0);
}

}  // namespace
}  // namespace kc::bench
