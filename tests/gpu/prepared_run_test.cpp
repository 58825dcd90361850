// PreparedRun's choice of bench op per pass (cpu;smoke: no device needed): the forward
// of a pool keeps indices only in training mode, and the backward of an inference-mode
// pool is refused with the reason instead of routing dy through indices never made.
#include "kc/gpu/prepared_run.h"

#include <gtest/gtest.h>

#include "gpu_cases.h"

namespace kc {
namespace {

Case find_case(const std::string& name) {
  for (const Case& c : gpu_test::cuda_cases()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no case " << name;
  return {};
}

TEST(PreparedRunOps, EachPassMapsToItsBenchOp) {
  const Case conv = find_case("conv2d same bias f32");
  const Case fused = find_case("fused groups f32");
  const Case training = find_case("maxpool ties f32");
  EXPECT_EQ(*gpu::bench_op_for(conv, gpu::PreparedPass::kForward), BenchOp::kConvForward);
  EXPECT_EQ(*gpu::bench_op_for(conv, gpu::PreparedPass::kBackward), BenchOp::kConvBackward);
  EXPECT_EQ(*gpu::bench_op_for(fused, gpu::PreparedPass::kBackward), BenchOp::kConvBackward);
  EXPECT_EQ(*gpu::bench_op_for(training, gpu::PreparedPass::kForward), BenchOp::kPoolTraining);
  EXPECT_EQ(*gpu::bench_op_for(training, gpu::PreparedPass::kBackward), BenchOp::kPoolBackward);
}

TEST(PreparedRunOps, AnInferencePoolHasNoBackward) {
  const Case inference = find_case("maxpool inference f32");
  EXPECT_EQ(*gpu::bench_op_for(inference, gpu::PreparedPass::kForward), BenchOp::kPoolInference);
  auto op = gpu::bench_op_for(inference, gpu::PreparedPass::kBackward);
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(op.status().message().find("training"), std::string::npos);
}

TEST(PreparedRunOps, RunBeforePrepareIsRefused) {
  gpu::PreparedRun run;
  EXPECT_EQ(run.run().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(run.outputs().ok());
  EXPECT_EQ(run.op(), nullptr);
}

}  // namespace
}  // namespace kc
