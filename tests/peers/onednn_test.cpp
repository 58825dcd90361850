// The oneDNN peers against the reference: each op on a small case (check_case), the
// max-pool workspace's encoding on ties, NaN, -inf and padding, its round trip through
// the contract's indices, and what the peers refuse (f64, backward without indices,
// padding modes, convolutions oneDNN cannot run as Winograd, bf16 padding-only taps on AMX).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "kc/onednn/backends.h"
#include "kc/ref/maxpool.h"
#include "kc/runner.h"
#include "run/waivers.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc {
namespace {

using test::ConvSpec;
using test::PoolSpec;

std::string describe(const CaseResult& r) {
  std::string s = std::string(disposition_name(r.disposition)) + " " + r.message;
  for (const CheckResult& c : r.checks)
    s += "\n  " + c.name + ": " + std::string(disposition_name(c.disposition)) + " " + c.message;
  return s;
}

void expect_passes(Backend& backend, Case c, std::vector<std::string> checks) {
  c.checks = std::move(checks);
  // A CPU without the instructions oneDNN needs for a dtype (bf16 without AVX-512) is the
  // one refusal accepted: it says so, and there is nothing to compare.
  if (const Status s = backend.supports(c); !s.ok()) {
    ASSERT_NE(s.message().find("this CPU has no"), std::string::npos) << s.message();
    return;
  }
  const CaseResult r = check_case(c, backend);
  EXPECT_EQ(disposition_name(r.disposition), disposition_name(Disposition::kPassed))
      << backend.name() << ": " << describe(r);
}

std::vector<std::unique_ptr<Backend>> direct_peers() {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(onednn::make_onednn_backend());
  v.push_back(onednn::make_onednn_plain_backend());
  return v;
}

Case conv(ConvSpec s, uint64_t seed = 3) {
  s.dtype = s.dtype == DType::kF64 ? DType::kF32 : s.dtype;
  Case c = test::conv_case(s);
  c.data = DataSpec{seed, Fill::kRandom};
  return c;
}

TEST(Onednn, ConvMatchesTheReference) {
  const std::vector<Case> cases = {
      conv({.batch = 2,
            .channels = 4,
            .out_channels = 8,
            .spatial = {6, 6},
            .kernel = {3, 3},
            .padding = test::explicit_pad({{1, 1}, {1, 1}}),
            .bias = true,
            .dtype = DType::kBF16}),
      conv({.batch = 2,
            .channels = 3,
            .out_channels = 4,
            .spatial = {7, 6},
            .kernel = {3, 3},
            .padding = test::explicit_pad({{1, 1}, {1, 1}}),
            .bias = true}),
      conv({.batch = 1,
            .channels = 4,
            .out_channels = 6,
            .groups = 2,
            .spatial = {9, 8},
            .kernel = {3, 2},
            .stride = {2, 1},
            .dilation = {1, 2},
            .padding = test::explicit_pad({{2, 0}, {0, 1}}),
            .bias = true}),
      conv({.batch = 2,
            .channels = 2,
            .out_channels = 3,
            .spatial = {11},
            .kernel = {3},
            .stride = {2},
            .padding = test::explicit_pad({{1, 2}})}),
      conv({.batch = 1,
            .channels = 2,
            .out_channels = 2,
            .spatial = {4, 5, 5},
            .kernel = {2, 3, 3},
            .padding = test::explicit_pad({{0, 1}, {1, 1}, {1, 0}}),
            .bias = true}),
  };
  for (auto& backend : direct_peers()) {
    for (const Case& c : cases) expect_passes(*backend, c, {"forward", "backward"});
  }
}

TEST(Onednn, FusedReluMatchesTheReference) {
  Case c = conv({.batch = 2,
                 .channels = 3,
                 .out_channels = 4,
                 .spatial = {6, 6},
                 .kernel = {3, 3},
                 .padding = test::explicit_pad({{1, 1}, {1, 1}}),
                 .bias = true});
  c.op = ConvBiasReluParams{std::get<ConvParams>(c.op)};
  for (auto& backend : direct_peers()) expect_passes(*backend, c, {"forward", "backward"});
}

TEST(Onednn, MaxPoolMatchesTheReference) {
  for (PoolMode mode : {PoolMode::kTraining, PoolMode::kInference}) {
    const std::vector<Case> cases = {
        test::pool_case({.batch = 2,
                         .channels = 3,
                         .spatial = {7, 7},
                         .kernel = {3, 3},
                         .stride = {2, 2},
                         .pads = {{1, 1}, {1, 1}},
                         .mode = mode,
                         .dtype = DType::kF32}),
        test::pool_case({.channels = 2,
                         .spatial = {10},
                         .kernel = {3},
                         .stride = {2},
                         .dilation = {2},
                         .pads = {{2, 1}},
                         .ceil_mode = true,
                         .mode = mode,
                         .dtype = DType::kF32}),
        test::pool_case({.channels = 2,
                         .spatial = {4, 5, 5},
                         .kernel = {2, 2, 3},
                         .stride = {2, 2, 2},
                         .pads = {{1, 0}, {0, 1}, {1, 1}},
                         .mode = mode,
                         .dtype = DType::kF32}),
    };
    for (auto& backend : direct_peers()) {
      for (const Case& c : cases) {
        std::vector<std::string> checks = {"forward"};
        if (mode == PoolMode::kTraining) checks = {"forward", "backward", "argmax"};
        expect_passes(*backend, c, checks);
      }
    }
  }
}

// A 5x5 plane with ties, a NaN and -inf, pooled 3x3 / 2 with padding 1: oneDNN's window
// offsets decode to the reference's first-maximum indices wherever the window holds no
// NaN (oneDNN's max never selects NaN: there the index is the first finite maximum).
TEST(Onednn, WorkspaceDecodesToTheContractIndices) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Case c = test::pool_case(
      {.spatial = {5, 5}, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 1}, {1, 1}}, .dtype = DType::kF32});
  const PoolGeometry g = *pool_geometry(c);
  Tensor x = Tensor::zeros(DType::kF32, g.x_shape());
  const std::vector<double> v = {1,    5, 5,    2, 0,   //
                                 3,    4, nan,  1, 0,   //
                                 -inf, 2, 7,    7, -1,  //
                                 -inf, 7, 7,    0, -1,  //
                                 -inf, 0, -inf, 3, 3};
  std::copy(v.begin(), v.end(), x.data.begin());
  const ref::PoolForward want = ref::maxpool_forward(g, x);
  for (auto& backend : direct_peers()) {
    Tensor y = poisoned(DType::kF32, g.y_shape());
    IndexTensor got{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(element_count(g.y_shape())))};
    ASSERT_TRUE(backend->maxpool_forward(g, x, y, &got).ok());
    for (int64_t o = 0; o < got.size(); ++o) {
      if (std::isnan(want.y[o])) {
        EXPECT_FALSE(std::isnan(x[got.data[o]])) << backend->name() << " output " << o;
        EXPECT_EQ(y[o], x[got.data[o]]) << backend->name() << " output " << o;
      } else {
        EXPECT_EQ(got.data[o], want.indices->data[o]) << backend->name() << " output " << o;
        EXPECT_EQ(y[o], want.y[o]) << backend->name() << " output " << o;
      }
    }
  }
}

// Training indices decoded and encoded back: dx equals the reference's (integer dy,
// distinct x, overlapping windows, so every sum is exact).
TEST(Onednn, WorkspaceRoundTripGivesTheReferenceDx) {
  Case c = test::pool_case({.batch = 2,
                            .channels = 3,
                            .spatial = {6, 7},
                            .kernel = {3, 3},
                            .stride = {2, 1},
                            .pads = {{1, 1}, {0, 1}},
                            .dtype = DType::kF32});
  const PoolGeometry g = *pool_geometry(c);
  std::mt19937_64 rng(11);
  Tensor x = test::distinct_tensor(g.x_shape(), rng);
  x.round_to_dtype(DType::kF32);
  Tensor dy = test::integer_tensor(g.y_shape(), rng, -8, 8);
  dy.dtype = DType::kF32;
  const ref::PoolForward want = ref::maxpool_forward(g, x);
  const Tensor want_dx = *ref::maxpool_backward(g, dy, want.indices);
  for (auto& backend : direct_peers()) {
    Tensor y = poisoned(DType::kF32, g.y_shape()), dx = poisoned(DType::kF32, g.x_shape());
    IndexTensor idx{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(element_count(g.y_shape())))};
    ASSERT_TRUE(backend->maxpool_forward(g, x, y, &idx).ok());
    EXPECT_TRUE(idx.data == std::vector<int64_t>(want.indices->data.begin(), want.indices->data.end()));
    ASSERT_TRUE(backend->maxpool_backward(g, dy, &idx, dx).ok());
    EXPECT_TRUE(bitwise_equal(dx,
                              [&] {
                                Tensor t = want_dx;
                                t.dtype = DType::kF32;
                                return t;
                              }()))
        << backend->name();
  }
}

TEST(Onednn, BackwardWithoutIndicesIsRefused) {
  Case c = test::pool_case({.spatial = {4, 4}, .kernel = {2, 2}, .dtype = DType::kF32});
  const PoolGeometry g = *pool_geometry(c);
  Tensor dy = Tensor::filled(DType::kF32, g.y_shape(), 1.0), dx = poisoned(DType::kF32, g.x_shape());
  for (auto& backend : direct_peers()) {
    const Status s = backend->maxpool_backward(g, dy, nullptr, dx);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
  }
}

TEST(Onednn, RefusesWhatOnednnCannotRun) {
  Case f64 = conv({.channels = 2, .out_channels = 2, .spatial = {5, 5}, .kernel = {3, 3}});
  f64.dtype = DType::kF64;
  Case reflect = conv({.channels = 2,
                       .out_channels = 2,
                       .spatial = {5, 5},
                       .kernel = {3, 3},
                       .padding = test::explicit_pad({{1, 1}, {1, 1}}),
                       .mode = PaddingMode::kReflect});
  Case last = test::pool_case({.spatial = {4, 4}, .kernel = {2, 2}, .tie = TieRule::kLast, .dtype = DType::kF32});
  for (auto& backend : direct_peers()) {
    EXPECT_NE(backend->supports(last).message().find("tie: last"), std::string::npos);
    const Status s = backend->supports(f64);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_NE(s.message().find("oneDNN has no f64 convolution"), std::string::npos) << s.message();
    EXPECT_NE(backend->supports(reflect).message().find("pads with zeros only"), std::string::npos);
  }
}

// oneDNN 2.6.3's AMX bf16 backward weights leave dw unwritten at a filter tap that reads
// only padding (onednn_supports.cpp): the blocked flavor refuses exactly those cases where
// AMX runs them; onednn.plain (gemm) and a case without such a tap are not refused for it.
bool has_cpu_flag(const std::string& flag) {
  const std::vector<std::string>& flags = this_cpu_flags();
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

TEST(Onednn, Bf16PaddingOnlyTapsAreRefusedWhereTheAmxKernelRunsThem) {
  const ConvSpec spec{.channels = 16,
                      .out_channels = 8,
                      .spatial = {6, 1},
                      .kernel = {3, 3},
                      .padding = test::pad_kind(PadKind::kSame),
                      .dtype = DType::kBF16};
  const Case tap = conv(spec);  // width 1 under 3 taps: taps 0 and 2 read only padding
  ConvSpec wider = spec;
  wider.spatial = {6, 3};
  const Case none = conv(wider);
  const std::string why = "a filter tap that reads only padding";
  auto blocked = onednn::make_onednn_backend();
  if (Status s = blocked->available(); !s.ok()) GTEST_SKIP() << s.message();
  EXPECT_EQ(blocked->supports(tap).message().find(why) != std::string::npos, has_cpu_flag("amx_bf16"))
      << blocked->supports(tap).message();
  EXPECT_EQ(blocked->supports(none).message().find(why), std::string::npos);
  EXPECT_EQ(onednn::make_onednn_plain_backend()->supports(tap).message().find(why), std::string::npos);
}

TEST(Onednn, WinogradRunsOnlyWhatOnednnRunsAsWinograd) {
  auto backend = onednn::make_onednn_winograd_backend();
  if (Status s = backend->available(); !s.ok()) GTEST_SKIP() << s.message();
  const Case wide = conv({.batch = 2,
                          .channels = 4,
                          .out_channels = 4,
                          .spatial = {12, 12},
                          .kernel = {5, 5},
                          .stride = {2, 2},
                          .padding = test::explicit_pad({{2, 2}, {2, 2}})});
  const Status s = backend->supports(wide);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("Winograd"), std::string::npos) << s.message();
  const Case f43 = conv({.batch = 2,
                         .channels = 16,
                         .out_channels = 16,
                         .spatial = {12, 12},
                         .kernel = {3, 3},
                         .padding = test::explicit_pad({{1, 1}, {1, 1}}),
                         .bias = true});
  EXPECT_TRUE(backend->supports(f43).ok()) << backend->supports(f43).message();
  Case run = f43;
  run.checks = {"forward"};
  const CaseResult r = check_case(run, *backend);
  EXPECT_NE(r.disposition, Disposition::kSkipped) << describe(r);
}

TEST(Onednn, NumericsAndVersion) {
  EXPECT_EQ(onednn::make_onednn_winograd_backend()->numerics().algorithm, Algorithm::kWinograd);
  EXPECT_EQ(onednn::make_onednn_winograd_backend()->numerics().transform_m, 4);
  EXPECT_EQ(onednn::make_onednn_backend()->numerics().relu_nan_grad, ReluNanGrad::kPassDy);
  EXPECT_EQ(onednn::library_version().rfind("oneDNN ", 0), 0u);
}

}  // namespace
}  // namespace kc
