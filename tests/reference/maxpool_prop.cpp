// Property tests of the reference max pooling: the fast reference (reference/src) equals
// the brute-force direct definition (reference/direct) bitwise, NaN positions and indices
// included, over random geometries (ranks 1-3, kernel, stride, dilation, asymmetric
// explicit / same / same_lower / valid padding, ceil_mode, every tie rule) and data
// full of ties, NaNs and infinities; plus the backward laws (finite differences, mass
// conservation) and mode equivalence. Sizes stay small so the whole file runs in well
// under a second.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/ref/maxpool.h"
#include "kc/shape.h"
#include "kc_direct.h"
#include "support/test_support.h"

namespace {

using kc::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string describe(const kc::PoolGeometry& g) {
  std::ostringstream s;
  s << "N=" << g.batch << " C=" << g.channels << " ceil=" << g.ceil_mode << " tie=" << kc::tie_rule_name(g.tie);
  for (const kc::DimGeometry& d : g.spatial.dims) {
    s << " | in=" << d.in << " k=" << d.kernel << " s=" << d.stride << " d=" << d.dilation << " pad=" << d.pad_lo << "/"
      << d.pad_hi << " out=" << d.out;
  }
  return s.str();
}

// A random valid max-pool case: invalid draws (empty output, padding over half the
// window, a window of only padding) are discarded.
kc::Case random_pool_case() {
  const int rank = *rc::gen::inRange(1, 4);
  kc::Case c;
  c.dtype = kc::DType::kF64;
  c.input.batch = *rc::gen::inRange(1, 3);
  c.input.channels = *rc::gen::inRange(1, 3);
  kc::MaxPoolParams p;
  const auto pad_kind = *rc::gen::element(kc::PadKind::kExplicit, kc::PadKind::kExplicit, kc::PadKind::kSame,
                                          kc::PadKind::kSameLower, kc::PadKind::kValid);
  p.padding.kind = pad_kind;
  for (int i = 0; i < rank; ++i) {
    const int64_t k = *rc::gen::inRange(1, 4);
    const int64_t dil = *rc::gen::inRange(1, 3);
    const int64_t half = (dil * (k - 1) + 1) / 2;  // padding limit: half the window extent
    c.input.spatial.push_back(*rc::gen::inRange(1, 7));
    p.kernel.push_back(k);
    p.stride.push_back(*rc::gen::inRange(1, 4));
    p.dilation.push_back(dil);
    if (pad_kind == kc::PadKind::kExplicit) {
      p.padding.pairs.push_back({*rc::gen::inRange<int64_t>(0, half + 1), *rc::gen::inRange<int64_t>(0, half + 1)});
    }
  }
  if (*rc::gen::inRange(0, 5) == 0) p.stride.clear();  // default: stride = kernel
  if (*rc::gen::inRange(0, 5) == 0) p.dilation.assign(static_cast<size_t>(rank), 1);
  p.ceil_mode = *rc::gen::arbitrary<bool>();
  p.tie = *rc::gen::element(kc::TieRule::kFirst, kc::TieRule::kLast, kc::TieRule::kAny);
  c.op = p;
  RC_PRE(kc::validate(c).ok());
  return c;
}

kc::PoolGeometry geometry_of(const kc::Case& c) {
  auto g = kc::pool_geometry(c);
  RC_ASSERT(g.ok());
  RC_LOG() << describe(g.value()) << "\n";
  return g.value();
}

// Data with many ties: small integers (and -0.0 beside 0.0), NaN, +inf and -inf; one
// palette is mostly -inf so that windows of only -inf are common.
Tensor tie_heavy_tensor(const kc::Dims& shape) {
  const int palette = *rc::gen::inRange(0, 3);
  const auto n = static_cast<size_t>(kc::element_count(shape));
  const auto codes = *rc::gen::container<std::vector<int>>(n, rc::gen::inRange(0, 12));
  Tensor t = Tensor::zeros(kc::DType::kF64, shape);
  for (size_t i = 0; i < n; ++i) {
    const int v = codes[i];
    double& e = t.data[i];
    if (palette == 0) {  // mixed
      e = v == 0 ? kNaN : v <= 2 ? -kInf : v == 3 ? kInf : v == 4 ? -0.0 : v % 3 - 1;
    } else if (palette == 1) {  // mostly -inf
      e = v < 9 ? -kInf : v == 9 ? kNaN : v - 10;
    } else {  // small integers only
      e = v == 11 ? -0.0 : v % 3 - 1;
    }
  }
  return t;
}

RC_GTEST_PROP(MaxPoolProp, FastReferenceEqualsDirectDefinition, ()) {
  const kc::Case c = random_pool_case();
  const kc::PoolGeometry g = geometry_of(c);
  const Tensor x = tie_heavy_tensor(g.x_shape());
  const auto fast = kc::ref::maxpool_forward(g, x);
  const auto direct = kc::ref::direct::maxpool_forward(g, x);
  RC_ASSERT(fast.indices.has_value());
  RC_ASSERT(fast.y.shape == g.y_shape());
  RC_ASSERT(kc::bitwise_equal(fast.y, direct.y));
  RC_ASSERT(fast.indices->shape == direct.indices.shape);
  RC_ASSERT(fast.indices->data == direct.indices.data);

  // Every index lies in its plane and holds the output value.
  const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
  for (int64_t w = 0; w < fast.y.size(); ++w) {
    const int64_t i = fast.indices->data[static_cast<size_t>(w)];
    RC_ASSERT(i >= 0 && i < in);
    const double xv = x[(w / out) * in + i];
    RC_ASSERT((std::isnan(xv) && std::isnan(fast.y[w])) || xv == fast.y[w]);
  }

  // Backward: the scatter and the per-element gather add in the same order.
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const Tensor dy = kc::test::random_tensor(kc::DType::kF64, g.y_shape(), rng);
  const auto dx = kc::ref::maxpool_backward(g, dy, fast.indices);
  RC_ASSERT(dx.ok());
  RC_ASSERT(kc::bitwise_equal(*dx, kc::ref::direct::maxpool_backward(g, dy, direct.indices)));
}

RC_GTEST_PROP(MaxPoolProp, AnyTieIsComputedAsFirst, ()) {
  kc::Case c = random_pool_case();
  auto& p = std::get<kc::MaxPoolParams>(c.op);
  p.tie = kc::TieRule::kAny;
  const kc::PoolGeometry any = geometry_of(c);
  p.tie = kc::TieRule::kFirst;
  const kc::PoolGeometry first = geometry_of(c);
  const Tensor x = tie_heavy_tensor(any.x_shape());
  const auto a = kc::ref::maxpool_forward(any, x);
  const auto f = kc::ref::maxpool_forward(first, x);
  RC_ASSERT(kc::bitwise_equal(a.y, f.y));
  RC_ASSERT(a.indices->data == f.indices->data);
}

RC_GTEST_PROP(MaxPoolProp, InferenceGivesTrainingYAndNoIndices, ()) {
  kc::Case c = random_pool_case();
  auto& p = std::get<kc::MaxPoolParams>(c.op);
  p.mode = kc::PoolMode::kTraining;
  const kc::PoolGeometry train = geometry_of(c);
  p.mode = kc::PoolMode::kInference;
  const kc::PoolGeometry infer = geometry_of(c);
  const Tensor x = tie_heavy_tensor(train.x_shape());
  const auto t = kc::ref::maxpool_forward(train, x);
  const auto i = kc::ref::maxpool_forward(infer, x);
  RC_ASSERT(t.indices.has_value());
  RC_ASSERT(!i.indices.has_value());
  RC_ASSERT(kc::bitwise_equal(t.y, i.y));
  const auto dx = kc::ref::maxpool_backward(infer, Tensor::zeros(kc::DType::kF64, infer.y_shape()), i.indices);
  RC_ASSERT(!dx.ok());
  RC_ASSERT(dx.status().code() == kc::StatusCode::kFailedPrecondition);
}

RC_GTEST_PROP(MaxPoolProp, BackwardConservesMassPerPlane, ()) {
  const kc::PoolGeometry g = geometry_of(random_pool_case());
  const Tensor x = tie_heavy_tensor(g.x_shape());
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  // Integer dy: every sum below is exact, whatever the order of addition.
  const Tensor dy = kc::test::integer_tensor(g.y_shape(), rng, -50, 50);
  const auto dx = kc::ref::maxpool_backward(g, dy, kc::ref::maxpool_forward(g, x).indices);
  RC_ASSERT(dx.ok());
  const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
  for (int64_t p = 0; p < g.batch * g.channels; ++p) {
    double sx = 0.0, sy = 0.0;
    for (int64_t i = 0; i < in; ++i) sx += (*dx)[p * in + i];
    for (int64_t o = 0; o < out; ++o) sy += dy[p * out + o];
    RC_ASSERT(sx == sy);
  }
}

RC_GTEST_PROP(MaxPoolProp, BackwardMatchesFiniteDifferences, ()) {
  const kc::PoolGeometry g = geometry_of(random_pool_case());
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  // Distinct inputs (gap 2/numel >= 2/864): the max is locally linear, so central
  // differences with h far below the gap are exact up to rounding.
  const Tensor x = kc::test::distinct_tensor(g.x_shape(), rng);
  const Tensor dy = kc::test::random_tensor(kc::DType::kF64, g.y_shape(), rng);
  const auto loss = [&](const Tensor& xx) { return kc::test::dot(kc::ref::maxpool_forward(g, xx).y, dy); };
  const Tensor numeric = kc::test::numeric_gradient(loss, x, 1e-6);
  const auto analytic = kc::ref::maxpool_backward(g, dy, kc::ref::maxpool_forward(g, x).indices);
  RC_ASSERT(analytic.ok());
  RC_ASSERT(kc::test::max_abs_diff(numeric, *analytic) < 1e-6);
}

}  // namespace
