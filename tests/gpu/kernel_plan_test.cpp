// What kcheck explain prints for the GPU backends (cuda_kernel_plan, kc/gpu/backends.h),
// decided on the host: `cuda` names the CUTLASS kernel of each conv pass the engine takes
// and says why where it does not; `cuda.direct` runs the direct kernels everywhere. The
// device tests' CUTLASS cases (gpu_cases.h) are all taken, so a GPU run checks the engine.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_cases.h"
#include "kc/gpu/backends.h"

namespace kc {
namespace {

using test::explicit_pad;
using test::pad_kind;

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

bool has_line_starting(const std::vector<std::string>& lines, const std::string& start) {
  for (const std::string& l : lines)
    if (l.rfind(start, 0) == 0) return true;
  return false;
}

#ifdef KC_HAVE_CUTLASS
TEST(KernelPlan, TheDeviceTestsCutlassCasesRunEveryPassOnCutlass) {
  for (const Case& c : gpu_test::cutlass_cases()) {
    const std::vector<std::string> plan = gpu::cuda_kernel_plan(c);
    for (const char* pass : {"forward", "backward data", "backward weight"})
      EXPECT_TRUE(has_line_starting(plan, std::string("cuda: ") + pass + ": cutlass ")) << c.name << "\n"
                                                                                        << joined(plan);
    EXPECT_TRUE(has_line_starting(plan, "cuda.direct: direct (igemm ")) << joined(plan);
  }
  const Case large = gpu_test::cutlass_cases().back();
  EXPECT_TRUE(has_line_starting(gpu::cuda_kernel_plan(large), "cuda: forward: cutlass fprop bf16 128x128x64"))
      << joined(gpu::cuda_kernel_plan(large));
  const Case fused = gpu_test::cutlass_cases()[1];
  const std::vector<std::string> plan = gpu::cuda_kernel_plan(fused);
  EXPECT_TRUE(has_line_starting(plan, "cuda: forward: cutlass fprop bf16 + bias + relu ")) << joined(plan);
  EXPECT_TRUE(has_line_starting(plan, "cuda: backward relu mask: cutlass fprop bf16 -> f32 pre-activation "))
      << joined(plan);
}

// The fused op's backward takes CUTLASS only where its forward does, in the same tile:
// relu' is then the forward's decision; else every pass of it is direct, and says why.
TEST(KernelPlan, TheFusedBackwardFollowsItsForward) {
  const Case k4 = gpu_test::fused({1, 8, 4, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame)}, "k4",
                                  DType::kBF16);  // K = 4: the f32 pre-activation kernel would take it alone
  const std::vector<std::string> plan = gpu::cuda_kernel_plan(k4);
  EXPECT_TRUE(has_line_starting(plan, "cuda: forward: direct: out_channels 4 not a multiple of 8")) << joined(plan);
  EXPECT_TRUE(has_line_starting(plan, "cuda: backward relu mask: direct: the forward is direct")) << joined(plan);
  EXPECT_TRUE(has_line_starting(plan, "cuda: backward weight: direct: the fused op's relu mask runs on the direct"))
      << joined(plan);
}

TEST(KernelPlan, StacksArePlannedPerLayer) {
  Case stack;
  stack.dtype = DType::kBF16;
  stack.input = InputSpec{2, 8, {8, 8}};
  StackParams p;
  p.depth = 3;
  p.conv.out_channels = 8;
  p.conv.kernel = {3};
  p.conv.padding = pad_kind(PadKind::kValid);  // each layer 2 smaller: one plan for all three
  stack.op = p;
  const std::vector<std::string> plan = gpu::cuda_kernel_plan(stack);
  EXPECT_TRUE(has_line_starting(plan, "cuda: layers 1-3: forward: cutlass fprop bf16 ")) << joined(plan);
  EXPECT_TRUE(has_line_starting(plan, "cuda.direct: direct (igemm ")) << joined(plan);
}

TEST(KernelPlan, WhatCutlassDoesNotTakeSaysWhy) {
  const Case rgb =
      gpu_test::conv({1, 3, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame)}, "rgb", DType::kBF16);
  EXPECT_TRUE(has_line_starting(gpu::cuda_kernel_plan(rgb), "cuda: forward: direct: channels 3 not a multiple of 8 ("))
      << joined(gpu::cuda_kernel_plan(rgb));
  test::ConvSpec s{1, 8, 8, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, explicit_pad({{1, 1}, {1, 1}})};
  s.mode = PaddingMode::kReflect;
  const Case reflect = gpu_test::conv(s, "reflect", DType::kF32);
  EXPECT_TRUE(has_line_starting(gpu::cuda_kernel_plan(reflect),
                                "cuda: backward weight: direct: padding_mode reflect: CUTLASS's problem pads with "
                                "zeros only"))
      << joined(gpu::cuda_kernel_plan(reflect));
}
#else
TEST(KernelPlan, WithoutCutlassEveryPassIsDirectWithTheReason) {
  const Case c = gpu_test::cutlass_cases().front();
  EXPECT_TRUE(has_line_starting(gpu::cuda_kernel_plan(c), "cuda: forward: direct: built without the CUTLASS headers"))
      << joined(gpu::cuda_kernel_plan(c));
}
#endif

TEST(KernelPlan, RefusalsAndOtherOpsAreNamed) {
  Case f64 = gpu_test::cutlass_cases().front();
  f64.dtype = DType::kF64;
  const std::vector<std::string> plan = gpu::cuda_kernel_plan(f64);
  EXPECT_TRUE(has_line_starting(plan, "cuda: refused: f64 storage")) << joined(plan);
  EXPECT_TRUE(has_line_starting(plan, "cuda.direct: refused: f64 storage")) << joined(plan);
  const Case pool = gpu_test::avgpool(gpu_test::avgpool_specs()[0].second, "avgpool", DType::kF32);
  EXPECT_EQ(gpu::cuda_kernel_plan(pool),
            (std::vector<std::string>{"cuda: direct (avgpool kernels)", "cuda.direct: direct (avgpool kernels)"}));
}

}  // namespace
}  // namespace kc
