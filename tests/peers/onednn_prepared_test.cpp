// The oneDNN peers' prepared ops (`kcheck bench`) against their own host calls: every op
// of a grouped strided conv with bias, a conv_bias_relu and a max pool gives, after run(),
// the host call's outputs bit for bit (the same primitives, a deterministic CPU), and the
// same again on a second run; what is refused; the GEMM ceilings.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "core/fill.h"
#include "kc/onednn/backends.h"
#include "support/case_builders.h"
#include "support/test_support.h"

namespace kc {
namespace {

using test::ConvSpec;

std::vector<std::unique_ptr<Backend>> peers() {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(onednn::make_onednn_backend());
  v.push_back(onednn::make_onednn_plain_backend());
  return v;
}

Case conv(ConvSpec s) {
  Case c = test::conv_case(s);
  c.data = DataSpec{5, Fill::kRandom};
  return c;
}

Case grouped_strided() {
  return conv({.batch = 2,
               .channels = 4,
               .out_channels = 6,
               .groups = 2,
               .spatial = {9, 8},
               .kernel = {3, 3},
               .stride = {2, 2},
               .padding = test::explicit_pad({{1, 1}, {1, 1}}),
               .bias = true,
               .dtype = DType::kF32});
}

Case fused() {
  Case c = conv({.batch = 2,
                 .channels = 3,
                 .out_channels = 4,
                 .spatial = {6, 6},
                 .kernel = {3, 3},
                 .padding = test::explicit_pad({{1, 1}, {1, 1}}),
                 .bias = true,
                 .dtype = DType::kF32});
  c.op = ConvBiasReluParams{std::get<ConvParams>(c.op)};
  return c;
}

Case pool() {
  return test::pool_case({.batch = 2,
                          .channels = 3,
                          .spatial = {7, 7},
                          .kernel = {3, 3},
                          .stride = {2, 2},
                          .pads = {{1, 1}, {1, 1}},
                          .dtype = DType::kF32});
}

// The host calls' outputs, in the fields of PreparedOutputs.
PreparedOutputs host_outputs(Backend& backend, const Case& c, const OpInputs& in) {
  PreparedOutputs out;
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    const PoolGeometry g = *pool_geometry(c);
    out.y = poisoned(c.dtype, g.y_shape());
    out.dx = poisoned(c.dtype, g.x_shape());
    out.indices = IndexTensor{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(element_count(g.y_shape())))};
    EXPECT_TRUE(backend.maxpool_forward(g, in.x, out.y, &*out.indices).ok());
    EXPECT_TRUE(backend.maxpool_backward(g, in.dy, &*out.indices, out.dx).ok());
    return out;
  }
  const ConvGeometry g = *conv_geometry(c);
  const bool relu = std::holds_alternative<ConvBiasReluParams>(c.op);
  out.y = poisoned(c.dtype, g.y_shape());
  out.dx = poisoned(c.dtype, g.x_shape());
  out.dw = poisoned(c.dtype, g.w_shape());
  out.db = poisoned(c.dtype, g.b_shape());
  EXPECT_TRUE(backend.conv_forward(g, in.x, in.w, &in.b, relu, out.y).ok());
  EXPECT_TRUE(backend.conv_backward(g, in.x, in.w, &in.b, relu, in.dy, out.dx, out.dw, &out.db).ok());
  return out;
}

// Every output the op set equals the host call's, bit for bit.
void expect_host_outputs(const PreparedOutputs& got, const PreparedOutputs& want, const std::string& what) {
  for (auto [name, g, w] : {std::tuple{"y", &got.y, &want.y}, std::tuple{"dx", &got.dx, &want.dx},
                            std::tuple{"dw", &got.dw, &want.dw}, std::tuple{"db", &got.db, &want.db}}) {
    if (g->size() > 0) {
      EXPECT_TRUE(bitwise_equal(*g, *w)) << what << ": " << name;
    }
  }
  if (got.indices) {
    EXPECT_TRUE(got.indices->data == want.indices->data) << what << ": indices";
  }
}

// Prepares op, runs it twice, and checks both runs' outputs against the host calls.
void expect_prepared_matches(Backend& backend, const Case& c, BenchOp op, std::vector<std::string> sets) {
  const std::string what = backend.name() + " " + std::string(bench_op_name(op));
  const OpInputs in = *make_inputs(c);
  const PreparedOutputs want = host_outputs(backend, c, in);
  StatusOr<std::unique_ptr<PreparedOp>> p = backend.prepare(c, op, in, {});
  ASSERT_TRUE(p.ok()) << what << ": " << p.status().message();
  PreparedOp& prepared = **p;
  EXPECT_EQ(prepared.device(), "cpu");
  EXPECT_FALSE(prepared.algorithm().empty()) << what;
  EXPECT_GT(prepared.memory().held_bytes, 0) << what;
  if (op == BenchOp::kPoolTraining || op == BenchOp::kPoolBackward) {
    EXPECT_GT(prepared.memory().workspace_bytes, 0) << what << ": the pool's workspace";
  }
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(prepared.run().ok()) << what;
    ASSERT_TRUE(prepared.synchronize().ok()) << what;
    const StatusOr<PreparedOutputs> got = prepared.outputs();
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    for (const std::string& s : sets) {
      const bool set = s == "indices" ? got->indices.has_value()
                                      : (s == "y"    ? got->y
                                         : s == "dx" ? got->dx
                                         : s == "dw" ? got->dw
                                                     : got->db)
                                                .size() > 0;
      EXPECT_TRUE(set) << what << " sets no " << s;
    }
    expect_host_outputs(*got, want, what + " run " + std::to_string(run + 1));
  }
}

TEST(OnednnPrepared, ConvOpsGiveTheHostCallsOutputs) {
  for (auto& backend : peers()) {
    const Case c = grouped_strided();
    expect_prepared_matches(*backend, c, BenchOp::kConvForward, {"y"});
    expect_prepared_matches(*backend, c, BenchOp::kConvBackwardData, {"dx"});
    expect_prepared_matches(*backend, c, BenchOp::kConvBackwardWeight, {"dw", "db"});
    expect_prepared_matches(*backend, c, BenchOp::kConvBackward, {"dx", "dw", "db"});
  }
}

TEST(OnednnPrepared, FusedOpsGiveTheHostCallsOutputs) {
  for (auto& backend : peers()) {
    const Case c = fused();
    expect_prepared_matches(*backend, c, BenchOp::kConvForward, {"y"});
    expect_prepared_matches(*backend, c, BenchOp::kConvBackward, {"dx", "dw", "db"});
    expect_prepared_matches(*backend, c, BenchOp::kConvBackwardData, {"dx"});
    expect_prepared_matches(*backend, c, BenchOp::kConvBackwardWeight, {"dw", "db"});
  }
}

TEST(OnednnPrepared, PoolOpsGiveTheHostCallsOutputs) {
  for (auto& backend : peers()) {
    const Case c = pool();
    expect_prepared_matches(*backend, c, BenchOp::kPoolInference, {"y"});
    expect_prepared_matches(*backend, c, BenchOp::kPoolTraining, {"y", "indices"});
    expect_prepared_matches(*backend, c, BenchOp::kPoolBackward, {"dx", "indices"});
  }
}

TEST(OnednnPrepared, WinogradForwardGivesTheHostCallsOutputs) {
  auto backend = onednn::make_onednn_winograd_backend();
  if (Status s = backend->available(); !s.ok()) GTEST_SKIP() << s.message();
  const Case c = conv({.batch = 2,
                       .channels = 16,
                       .out_channels = 16,
                       .spatial = {12, 12},
                       .kernel = {3, 3},
                       .padding = test::explicit_pad({{1, 1}, {1, 1}}),
                       .bias = true,
                       .dtype = DType::kF32});
  expect_prepared_matches(*backend, c, BenchOp::kConvForward, {"y"});
  const OpInputs in = *make_inputs(c);
  EXPECT_NE((*backend->prepare(c, BenchOp::kConvForward, in, {}))->algorithm().find("wino"), std::string::npos);
}

TEST(OnednnPrepared, RefusesWhatItCannotTimeHonestly) {
  auto backend = onednn::make_onednn_backend();
  const Case c = grouped_strided();
  const OpInputs in = *make_inputs(c);
  const auto db = backend->prepare(c, BenchOp::kConvBackwardBias, in, {});
  EXPECT_EQ(db.status().code(), StatusCode::kUnimplemented);
  const auto atomics = backend->prepare(c, BenchOp::kConvBackwardWeight, in, {.deterministic = false});
  EXPECT_EQ(atomics.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(backend->prepare(c, BenchOp::kPoolTraining, in, {}).status().code(), StatusCode::kInvalidArgument);
  Case f64 = c;
  f64.dtype = DType::kF64;
  EXPECT_EQ(backend->prepare(f64, BenchOp::kConvForward, in, {}).status().code(), StatusCode::kUnimplemented);
  OpInputs wrong = in;
  wrong.dy = Tensor::zeros(DType::kF32, {1, 2, 3});
  EXPECT_EQ(backend->prepare(c, BenchOp::kConvBackward, wrong, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(OnednnPrepared, GemmCeilingsArePositiveAndFinite) {
  const StatusOr<std::vector<Ceiling>> got = onednn::make_onednn_backend()->measure_ceilings();
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_FALSE(got->empty());
  EXPECT_EQ(got->front().name, "onednn gemm f32");
  for (const Ceiling& c : *got) {
    EXPECT_TRUE(std::isfinite(c.per_second) && c.per_second > 0) << c.name << " " << c.per_second;
    EXPECT_EQ(c.device, "cpu");
    EXPECT_TRUE(c.flops);
    EXPECT_NE(c.detail.find("M=N=K="), std::string::npos) << c.detail;
  }
}

// kcheck bench measures the ceilings in its parent and forks its workers after: oneDNN
// must leave no OpenMP threads behind, or a forked child stalls on every primitive.
TEST(OnednnPrepared, AChildForkedAfterTheCeilingsRunsItsOps) {
  auto backend = onednn::make_onednn_backend();
  const Case c = pool();
  const OpInputs in = *make_inputs(c);
  ASSERT_TRUE((*backend->prepare(c, BenchOp::kPoolInference, in, {}))->run().ok());  // the runtime's threads exist
  ASSERT_TRUE(backend->measure_ceilings().ok());
  EXPECT_EXIT(
      {
        alarm(30);  // a stalled runtime ends the child by SIGALRM
        auto p = backend->prepare(c, BenchOp::kPoolTraining, in, {});
        bool ok = p.ok();
        for (int run = 0; ok && run < 100; ++run) ok = (*p)->run().ok();
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kc
