// Property: the fast reference convolution (im2col + GEMM) equals the direct-loop
// definition over random geometries: ranks 1-3, strides, dilations, groups (depthwise
// too), every padding form and mode, bias. Integer fills make every sum exact, so the
// two must agree bitwise whatever order they add in; a real-valued fill checks the same
// within a few ulps.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/validate.h"
#include "kc/ref/conv.h"
#include "kc_direct.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc::ref {
namespace {

PadSpec gen_padding(int64_t rank) {
  const int kind = *rc::gen::inRange(0, 4);
  if (kind == 1) return test::pad_kind(PadKind::kSame);
  if (kind == 2) return test::pad_kind(PadKind::kSameLower);
  if (kind == 3) return test::pad_kind(PadKind::kValid);
  std::vector<std::array<int64_t, 2>> pairs;
  for (int64_t i = 0; i < rank; ++i)
    pairs.push_back({*rc::gen::inRange<int64_t>(0, 4), *rc::gen::inRange<int64_t>(0, 4)});
  return test::explicit_pad(pairs);
}

// A random valid conv geometry, small enough for the direct loops.
ConvGeometry gen_geometry() {
  const int64_t rank = *rc::gen::inRange<int64_t>(1, 4);
  const int64_t max_in = rank == 3 ? 6 : (rank == 2 ? 9 : 16);
  test::ConvSpec s;
  s.batch = *rc::gen::inRange<int64_t>(1, 4);
  s.groups = *rc::gen::element<int64_t>(1, 1, 2, 3);
  s.channels = s.groups * *rc::gen::inRange<int64_t>(1, 4);
  s.out_channels = s.groups * *rc::gen::inRange<int64_t>(1, 4);
  for (int64_t i = 0; i < rank; ++i) {
    s.spatial.push_back(*rc::gen::inRange<int64_t>(1, max_in + 1));
    s.kernel.push_back(*rc::gen::inRange<int64_t>(1, 5));
    s.stride.push_back(*rc::gen::inRange<int64_t>(1, 4));
    s.dilation.push_back(*rc::gen::inRange<int64_t>(1, 4));
  }
  s.padding = gen_padding(rank);
  s.mode =
      *rc::gen::element(PaddingMode::kZeros, PaddingMode::kReflect, PaddingMode::kReplicate, PaddingMode::kCircular);
  s.bias = *rc::gen::arbitrary<bool>();
  Case c = test::conv_case(s);
  if (!validate(c).ok()) {  // pads too wide for reflect/circular, or an empty output
    s.mode = PaddingMode::kZeros;
    s.padding = test::pad_kind(PadKind::kSame);  // SAME always has out = ceil(in / s) >= 1
    c = test::conv_case(s);
  }
  auto g = conv_geometry(c);
  RC_ASSERT(g.ok());
  return *g;
}

void assert_fast_equals_direct(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
                               const Tensor& dy, double tol) {
  const Tensor* bp = g.bias ? &b : nullptr;
  RC_ASSERT(test::max_abs_diff(conv_forward(g, x, w, bp), direct::conv_forward(g, x, w, bp)) <= tol);
  RC_ASSERT(test::max_abs_diff(conv_backward_data(g, dy, w), direct::conv_backward_data(g, dy, w)) <= tol);
  RC_ASSERT(test::max_abs_diff(conv_backward_weight(g, x, dy), direct::conv_backward_weight(g, x, dy)) <= tol);
  RC_ASSERT(test::max_abs_diff(conv_backward_bias(g, dy), direct::conv_backward_bias(g, dy)) <= tol);
}

RC_GTEST_PROP(ConvFastPath, EqualsDirectDefinitionBitwiseInIntegers, ()) {
  const ConvGeometry g = gen_geometry();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const Tensor x = test::integer_tensor(g.x_shape(), rng, -7, 7);
  const Tensor w = test::integer_tensor(g.w_shape(), rng, -7, 7);
  const Tensor b = test::integer_tensor(g.b_shape(), rng, -7, 7);
  const Tensor dy = test::integer_tensor(g.y_shape(), rng, -7, 7);
  assert_fast_equals_direct(g, x, w, b, dy, 0.0);
}

RC_GTEST_PROP(ConvFastPath, EqualsDirectDefinitionInRealValues, ()) {
  const ConvGeometry g = gen_geometry();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const Tensor x = test::random_tensor(DType::kF64, g.x_shape(), rng);
  const Tensor w = test::random_tensor(DType::kF64, g.w_shape(), rng);
  const Tensor b = test::random_tensor(DType::kF64, g.b_shape(), rng);
  const Tensor dy = test::random_tensor(DType::kF64, g.y_shape(), rng);
  // Sums of at most a few hundred products of magnitude < 1, reordered: far below 1e-12.
  assert_fast_equals_direct(g, x, w, b, dy, 1e-12);
}

TEST(ConvFastPath, DetectsAPlantedDifference) {
  // The comparison above has teeth: a one-ulp change in one weight changes the output.
  test::ConvSpec s{.channels = 2, .out_channels = 2, .spatial = {5, 5}, .kernel = {3, 3}};
  const ConvGeometry g = *conv_geometry(test::conv_case(s));
  std::mt19937_64 rng(3);
  const Tensor x = test::random_tensor(DType::kF64, g.x_shape(), rng, 0.5, 1.0);
  Tensor w = test::random_tensor(DType::kF64, g.w_shape(), rng, 0.5, 1.0);
  const Tensor y = direct::conv_forward(g, x, w, nullptr);
  w[4] = std::nextafter(w[4], 2.0) + 1e-9;
  EXPECT_GT(test::max_abs_diff(conv_forward(g, x, w, nullptr), y), 0.0);
}

}  // namespace
}  // namespace kc::ref
