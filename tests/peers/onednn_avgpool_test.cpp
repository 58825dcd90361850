// The oneDNN peers' average pooling against the reference (kc::ref::avgpool_forward and
// avgpool_backward): ranks 1 to 3, strides, explicit, asymmetric and same padding,
// ceil_mode, count_include_pad true and false, windows wholly in the padding; the same
// cases through check_case; what supports() refuses, and the evidence for the one refusal
// that is a difference of semantics (oneDNN's include_padding divides a ceil_mode window
// that overhangs past in + pad_hi by the whole kernel); the prepared ops of `kcheck bench`.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/fill.h"
#include "kc/onednn/backends.h"
#include "kc/ref/avgpool.h"
#include "kc/runner.h"
#include "onednn_pool.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc {
namespace {

struct AvgSpec {
  int64_t batch = 1, channels = 1;
  Dims spatial, kernel, stride;
  PadSpec padding;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor;
  DType dtype = DType::kF32;
};

Case avg_case(const AvgSpec& s) {
  Case c;
  c.dtype = s.dtype;
  c.input = InputSpec{s.batch, s.channels, s.spatial};
  AvgPoolParams p;
  p.kernel = s.kernel;
  p.stride = s.stride;
  p.padding = s.padding;
  p.ceil_mode = s.ceil_mode;
  p.count_include_pad = s.count_include_pad;
  p.divisor = s.divisor;
  c.op = p;
  c.data = DataSpec{5, Fill::kRandom};
  return c;
}

// in, kernel, stride, [lo, hi] per dim, then the flags.
std::string case_summary(const Case& c) {
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
  std::string s;
  for (const DimGeometry& d : g.spatial.dims) {
    s += "in " + std::to_string(d.in) + " k " + std::to_string(d.kernel) + " s " + std::to_string(d.stride) + " pad [" +
         std::to_string(d.pad_lo) + ", " + std::to_string(d.pad_hi) + "]; ";
  }
  return s + (g.ceil_mode ? "ceil_mode " : "") + "count_include_pad " + (g.count_include_pad ? "true" : "false");
}

std::string describe(const CaseResult& r) {
  std::string s = std::string(disposition_name(r.disposition)) + " " + r.message;
  for (const CheckResult& c : r.checks)
    s += "\n  " + c.name + ": " + std::string(disposition_name(c.disposition)) + " " + c.message;
  return s;
}

std::vector<std::unique_ptr<Backend>> peers() {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(onednn::make_onednn_backend());
  v.push_back(onednn::make_onednn_plain_backend());
  return v;
}

// |got - want| within 2 * n * u * magnitude (+ the smallest normal f32, for flushed
// subnormals), n the kernel's count + 1: a window's sum, its division and the store.
void expect_close(const Tensor& got, const Tensor& want, const Tensor& magnitude, int64_t n, DType t,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (int64_t i = 0; i < got.size() && bad < 5; ++i) {
    const double tol = 2.0 * static_cast<double>(n) * unit_roundoff(t) * magnitude[i] + 0x1p-126;
    if (std::abs(got[i] - want[i]) <= tol) continue;
    ++bad;
    ADD_FAILURE() << what << " element " << i << ": " << got[i] << ", the reference " << want[i] << " (tolerance "
                  << tol << ")";
  }
}

// The cases oneDNN runs as the contract defines: every rank, stride, padding kind and
// both counts; ceil_mode where it adds a window only with count_include_pad: false, or
// where it adds none (then the windows end within in + pad_hi).
std::vector<Case> matching_cases(DType t) {
  using test::explicit_pad;
  std::vector<Case> v = {
      // rank 1
      avg_case({.batch = 2,
                .channels = 3,
                .spatial = {11},
                .kernel = {3},
                .stride = {2},
                .padding = explicit_pad({{1, 2}})}),
      avg_case({.channels = 2,
                .spatial = {11},
                .kernel = {3},
                .stride = {2},
                .padding = explicit_pad({{1, 2}}),
                .count_include_pad = false}),
      avg_case({.channels = 2,
                .spatial = {10},
                .kernel = {3},
                .stride = {2},
                .padding = explicit_pad({{1, 1}}),
                .ceil_mode = true,
                .count_include_pad = false}),
      // ceil_mode that adds no window: count_include_pad: true runs too
      avg_case({.channels = 2,
                .spatial = {9},
                .kernel = {3},
                .stride = {2},
                .padding = explicit_pad({{1, 1}}),
                .ceil_mode = true}),
      avg_case({.spatial = {8}, .kernel = {4}, .stride = {1}, .padding = test::pad_kind(PadKind::kSame)}),
      avg_case({.spatial = {8},
                .kernel = {4},
                .stride = {1},
                .padding = test::pad_kind(PadKind::kSameLower),
                .count_include_pad = false}),
      // windows wholly in the padding (count_include_pad: true only): y = 0 there
      avg_case({.channels = 2, .spatial = {5}, .kernel = {2}, .stride = {1}, .padding = explicit_pad({{3, 2}})}),
      // a kernel wider than the input
      avg_case({.spatial = {3},
                .kernel = {4},
                .stride = {1},
                .padding = explicit_pad({{2, 2}}),
                .count_include_pad = false}),
      // rank 2
      avg_case({.batch = 2,
                .channels = 3,
                .spatial = {7, 7},
                .kernel = {3, 3},
                .stride = {2, 2},
                .padding = explicit_pad({{1, 1}, {1, 1}})}),
      avg_case({.batch = 2,
                .channels = 3,
                .spatial = {7, 7},
                .kernel = {3, 3},
                .stride = {2, 2},
                .padding = explicit_pad({{1, 1}, {1, 1}}),
                .count_include_pad = false}),
      avg_case({.channels = 4,
                .spatial = {6, 9},
                .kernel = {2, 3},
                .stride = {1, 2},
                .padding = explicit_pad({{0, 1}, {2, 0}})}),
      avg_case({.channels = 4,
                .spatial = {6, 8},
                .kernel = {3, 3},
                .stride = {2, 2},
                .padding = explicit_pad({{0, 1}, {1, 0}}),
                .ceil_mode = true,
                .count_include_pad = false}),
      avg_case({.channels = 2,
                .spatial = {7, 6},
                .kernel = {3, 2},
                .stride = {2, 2},
                .padding = test::pad_kind(PadKind::kSame)}),
      avg_case({.channels = 2,
                .spatial = {7, 6},
                .kernel = {3, 2},
                .stride = {2, 2},
                .padding = test::pad_kind(PadKind::kSameLower),
                .count_include_pad = false}),
      avg_case({.channels = 3, .spatial = {8, 8}, .kernel = {2, 2}}),  // stride = kernel
      // rank 3
      avg_case({.channels = 2,
                .spatial = {4, 5, 5},
                .kernel = {2, 2, 3},
                .stride = {2, 1, 2},
                .padding = explicit_pad({{1, 0}, {0, 1}, {1, 1}})}),
      avg_case({.batch = 2,
                .channels = 2,
                .spatial = {5, 5, 6},
                .kernel = {3, 2, 3},
                .stride = {2, 2, 2},
                .padding = explicit_pad({{1, 1}, {0, 0}, {1, 0}}),
                .ceil_mode = true,
                .count_include_pad = false}),
      avg_case(
          {.spatial = {4, 4, 4}, .kernel = {3, 3, 3}, .stride = {1, 1, 1}, .padding = test::pad_kind(PadKind::kSame)}),
  };
  for (Case& c : v) c.dtype = t;
  return v;
}

// Runs forward and backward on the peer; false when the peer refuses the case for want
// of the CPU's instructions (the one refusal accepted).
bool run_against_reference(Backend& backend, const Case& c) {
  const std::string what = backend.name() + " " + std::string(dtype_name(c.dtype)) + " case " + case_summary(c);
  if (const Status s = backend.supports(c); !s.ok()) {
    EXPECT_NE(s.message().find("this CPU has no"), std::string::npos) << what << ": " << s.message();
    return false;
  }
  const AvgPoolGeometry g = *avgpool_geometry(c);
  std::mt19937_64 rng(17);
  Tensor x = test::random_tensor(c.dtype, g.x_shape(), rng);
  Tensor dy = test::random_tensor(c.dtype, g.y_shape(), rng);
  const int64_t n = g.spatial.kernel_count() + 1;
  Tensor y = poisoned(c.dtype, g.y_shape()), dx = poisoned(c.dtype, g.x_shape());
  const Status fs = backend.avgpool_forward(g, x, y);
  EXPECT_TRUE(fs.ok()) << what << ": " << fs.message();
  if (fs.ok()) {
    expect_close(y, ref::avgpool_forward(g, x), ref::avgpool_forward(g, absolute(x)), n, c.dtype, what + ": y");
  }
  const Status bs = backend.avgpool_backward(g, dy, dx);
  EXPECT_TRUE(bs.ok()) << what << ": " << bs.message();
  if (bs.ok()) {
    expect_close(dx, ref::avgpool_backward(g, dy), ref::avgpool_backward(g, absolute(dy)), n, c.dtype, what + ": dx");
  }
  return true;
}

TEST(OnednnAvgPool, MatchesTheReference) {
  for (auto& backend : peers()) {
    for (const Case& c : matching_cases(DType::kF32)) EXPECT_TRUE(run_against_reference(*backend, c));
    // bf16 and f16 need instructions this CPU may lack: run where the peer accepts them.
    for (DType t : {DType::kBF16, DType::kF16}) {
      for (const Case& c : matching_cases(t)) run_against_reference(*backend, c);
    }
  }
}

TEST(OnednnAvgPool, PassesTheChecks) {
  for (auto& backend : peers()) {
    for (Case c : matching_cases(DType::kF32)) {
      c.checks = {"forward", "backward"};
      const CaseResult r = check_case(c, *backend);
      EXPECT_EQ(disposition_name(r.disposition), disposition_name(Disposition::kPassed))
          << backend->name() << " " << case_summary(c) << ": " << describe(r);
    }
  }
}

// 1-D, in 8, kernel 3, stride 2, padding 1 each side, ceil_mode: 5 windows, the last
// [7, 10) overhangs in + pad_hi = 9 by one; the contract divides it by 2 (within
// [-1, 9)), with count_include_pad: true as with false.
Case overhang(bool count_include_pad) {
  return avg_case({.spatial = {8},
                   .kernel = {3},
                   .stride = {2},
                   .padding = test::explicit_pad({{1, 1}}),
                   .ceil_mode = true,
                   .count_include_pad = count_include_pad});
}

// 2-D, 7 x 8, kernel 3, stride 2, padding 1, ceil_mode: dim 0 ends at in + pad_hi, dim 1
// (out 5, the last window [7, 10)) overhangs in + pad_hi = 9 by one.
Case rank2_overhang() {
  return avg_case({.channels = 2,
                   .spatial = {7, 8},
                   .kernel = {3, 3},
                   .stride = {2, 2},
                   .padding = test::explicit_pad({{1, 1}, {1, 1}}),
                   .ceil_mode = true});
}

// The evidence for the refusal: run oneDNN's include_padding on the overhanging case
// anyway (the plan, below the backend's refusal): every window but the last matches the
// reference, and the last is x[7] / 3, the whole kernel, where the contract has x[7] / 2.
TEST(OnednnAvgPool, IncludePaddingDividesACeilOverhangByTheWholeKernel) {
  const AvgPoolGeometry g = *avgpool_geometry(overhang(true));
  ASSERT_EQ(g.spatial.dims[0].out, 5);
  EXPECT_EQ(onednn::avgpool_pad_r(g), onednn::memory::dims{2});
  Tensor x = Tensor::zeros(DType::kF32, g.x_shape());
  for (int64_t i = 0; i < x.size(); ++i) x.data[static_cast<size_t>(i)] = static_cast<double>(3 * (i + 1));
  const Tensor want = ref::avgpool_forward(g, x);
  ASSERT_EQ(want[4], x[7] / 2);
  for (onednn::Flavor flavor : {onednn::Flavor::kPlain, onednn::Flavor::kAny}) {
    onednn::Context ctx;
    const onednn::AvgPoolPlan plan = onednn::make_avgpool_plan(ctx.engine, g, onednn::memory::data_type::f32, flavor);
    Tensor y = poisoned(DType::kF32, g.y_shape());
    onednn::run_avgpool_forward(ctx, plan, x, y);
    for (int64_t o = 0; o < 4; ++o) EXPECT_EQ(y[o], want[o]) << onednn::implementations(plan) << " window " << o;
    EXPECT_EQ(y[4], x[7] / 3) << onednn::implementations(plan);
    // The backward agrees with its forward: dy / 3 to x[7], where the contract gives dy / 2.
    Tensor dy = Tensor::filled(DType::kF32, g.y_shape(), 6.0), dx = poisoned(DType::kF32, g.x_shape());
    onednn::run_avgpool_backward(ctx, plan, dy, dx);
    EXPECT_EQ(dx[7], 2.0 + 2.0) << onednn::implementations(plan);  // windows 3 ([5, 8)) and 4
    EXPECT_EQ(ref::avgpool_backward(g, dy)[7], 2.0 + 3.0);
  }
  // The same in 2-D, whatever the layout and kernel oneDNN picks: its y is the
  // reference's with the whole kernel (3 x 3) as the divisor, and differs from the
  // contract's in the windows of the last column, which overhang.
  const AvgPoolGeometry g2 = *avgpool_geometry(rank2_overhang());
  AvgPoolGeometry whole = g2;
  whole.divisor = 9;
  std::mt19937_64 rng(3);
  const Tensor x2 = test::random_tensor(DType::kF32, g2.x_shape(), rng, 0.5, 1.0);
  const Tensor contract = ref::avgpool_forward(g2, x2);
  for (onednn::Flavor flavor : {onednn::Flavor::kPlain, onednn::Flavor::kAny}) {
    onednn::Context ctx;
    const onednn::AvgPoolPlan plan = onednn::make_avgpool_plan(ctx.engine, g2, onednn::memory::data_type::f32, flavor);
    Tensor y = poisoned(DType::kF32, g2.y_shape());
    onednn::run_avgpool_forward(ctx, plan, x2, y);
    expect_close(y, ref::avgpool_forward(whole, x2), ref::avgpool_forward(whole, x2), 10, DType::kF32,
                 onednn::implementations(plan));
    const int64_t w = g2.spatial.dims[1].out;
    for (int64_t o = 0; o < y.size(); ++o) {
      const bool last_column = o % w == w - 1;
      EXPECT_EQ(std::abs(y[o] - contract[o]) > 1e-5, last_column) << onednn::implementations(plan) << " window " << o;
    }
  }
  // count_include_pad: false divides the overhanging window by its input elements, as
  // the contract does: oneDNN runs it and matches.
  for (auto& backend : peers()) {
    EXPECT_TRUE(backend->supports(overhang(false)).ok()) << backend->supports(overhang(false)).message();
    EXPECT_TRUE(run_against_reference(*backend, overhang(false)));
  }
}

TEST(OnednnAvgPool, RefusesWhatItDoesNotComputeAsTheContract) {
  Case divisor = avg_case({.spatial = {6, 6}, .kernel = {3, 3}, .stride = {1, 1}, .divisor = 4});
  Case f64 = avg_case({.spatial = {6, 6}, .kernel = {3, 3}, .dtype = DType::kF64});
  for (auto& backend : peers()) {
    Status s = backend->supports(divisor);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_NE(s.message().find("avgpool.divisor"), std::string::npos) << s.message();
    s = backend->supports(overhang(true));
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_NE(s.message().find("avgpool.count_include_pad"), std::string::npos) << s.message();
    s = backend->supports(rank2_overhang());  // dim 1 (8 wide) overhangs, dim 0 does not
    EXPECT_NE(s.message().find("count_include_pad: true with ceil_mode: dim 1"), std::string::npos) << s.message();
    s = backend->supports(f64);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_NE(s.message().find("f64"), std::string::npos) << s.message();
    // The host calls refuse the same, should a caller skip supports().
    const AvgPoolGeometry g = *avgpool_geometry(overhang(true));
    Tensor x = Tensor::filled(DType::kF32, g.x_shape(), 1.0), y = poisoned(DType::kF32, g.y_shape());
    EXPECT_EQ(backend->avgpool_forward(g, x, y).code(), StatusCode::kUnimplemented);
    Tensor dy = Tensor::filled(DType::kF32, g.y_shape(), 1.0), dx = poisoned(DType::kF32, g.x_shape());
    EXPECT_EQ(backend->avgpool_backward(g, dy, dx).code(), StatusCode::kUnimplemented);
    // The refused case runs on the checks as SKIPPED, with the reason.
    Case skipped = divisor;
    skipped.checks = {"forward"};
    const CaseResult r = check_case(skipped, *backend);
    EXPECT_EQ(r.disposition, Disposition::kSkipped) << describe(r);
  }
}

// The prepared ops give the host calls' outputs bit for bit (the same primitives).
TEST(OnednnAvgPool, PreparedOpsGiveTheHostCallsOutputs) {
  for (Case c : {matching_cases(DType::kF32)[9], matching_cases(DType::kF32)[15]}) {
    const AvgPoolGeometry g = *avgpool_geometry(c);
    const OpInputs in = *make_inputs(c);
    for (auto& backend : peers()) {
      Tensor y = poisoned(c.dtype, g.y_shape()), dx = poisoned(c.dtype, g.x_shape());
      ASSERT_TRUE(backend->avgpool_forward(g, in.x, y).ok());
      ASSERT_TRUE(backend->avgpool_backward(g, in.dy, dx).ok());
      for (BenchOp op : {BenchOp::kAvgPoolForward, BenchOp::kAvgPoolBackward}) {
        const std::string what = backend->name() + " " + std::string(bench_op_name(op));
        StatusOr<std::unique_ptr<PreparedOp>> p = backend->prepare(c, op, in, {});
        ASSERT_TRUE(p.ok()) << what << ": " << p.status().message();
        EXPECT_FALSE((*p)->algorithm().empty()) << what;
        for (int run = 0; run < 2; ++run) {
          ASSERT_TRUE((*p)->run().ok()) << what;
          const StatusOr<PreparedOutputs> out = (*p)->outputs();
          ASSERT_TRUE(out.ok()) << what << ": " << out.status().message();
          const bool forward = op == BenchOp::kAvgPoolForward;
          EXPECT_TRUE(bitwise_equal(forward ? out->y : out->dx, forward ? y : dx)) << what << " run " << run;
        }
      }
      EXPECT_EQ(backend->prepare(c, BenchOp::kPoolInference, in, {}).status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(
          backend->prepare(overhang(true), BenchOp::kAvgPoolForward, *make_inputs(overhang(true)), {}).status().code(),
          StatusCode::kUnimplemented);
    }
  }
}

}  // namespace
}  // namespace kc
