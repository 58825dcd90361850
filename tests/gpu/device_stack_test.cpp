// A stack's training step resident on the device (gpu/src/device_stack.cpp), label gpu:
// the same values as the host executor driving the same backend's per-layer calls, and
// device memory measured: at least the activations the plan holds at once, and less
// with sqrt checkpointing than without. Without a usable device every test is skipped
// with the device probe's reason.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/delegating_backend.h"
#include "require_device.h"
#include "kc/case_io.h"
#include "kc/gpu/backends.h"
#include "kc/runner.h"
#include "kc/stack_exec.h"

namespace kc {
namespace {

Case stack(const std::string& dtype, const std::string& layer) {
  auto cases = parse_cases("{op: stack, dtype: " + dtype + ", input: {batch: 2, channels: 3, spatial: [20, 20]}, " +
                               "stack: {depth: 9, layer: " + layer + "}, data: {seed: 7}, deterministic: true}",
                           "device_stack.yaml");
  EXPECT_EQ(cases.size(), 1u);
  EXPECT_TRUE(cases.at(0).c.ok()) << cases.at(0).c.status().to_string();
  return *cases.at(0).c;
}

const char* kPlain = "{conv: {out_channels: 4, kernel: [3, 3], padding: same, bias: true}, relu: true}";
const char* kPooled =
    "{conv: {out_channels: 4, kernel: [3, 3], padding: same}, relu: true, maxpool: {kernel: [3, 3], stride: [1, 1], "
    "padding: 1}}";

TEST(GpuDevice, ResidentStackMatchesThePerLayerCallsBitwise) {
  KC_REQUIRE_DEVICE();
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* layer : {kPlain, kPooled}) {
      const Case c = stack(dtype, layer);
      auto layers = stack_layers(c);
      ASSERT_TRUE(layers.ok());
      auto in = make_stack_inputs(c, *layers);
      ASSERT_TRUE(in.ok());
      auto resident = gpu::make_cuda_backend();
      // The same backend's per-layer calls only: run_stack() then drives them from the host.
      test::DelegatingBackend per_layer("cuda-per-layer", gpu::make_cuda_backend());
      ASSERT_TRUE(stack_supports(*resident, *layers).ok());
      ASSERT_TRUE(stack_supports(per_layer, *layers).ok());
      StackRunOptions opt{CheckpointPolicy{CheckpointKind::kSqrt, 0}, c.dtype, true, true};
      opt.keep_conv_grads = true;
      const StackRun a = run_stack(*resident, *layers, *in, opt);
      const StackRun b = run_stack(per_layer, *layers, *in, opt);
      ASSERT_TRUE(a.status.ok()) << a.status.to_string();
      ASSERT_TRUE(b.status.ok()) << b.status.to_string();
      EXPECT_GT(a.measured_peak_bytes, 0);
      EXPECT_EQ(b.measured_peak_bytes, -1);
      EXPECT_EQ(a.recomputations, plan_checkpoints(*layers, opt.checkpoint, c.dtype).recomputations);
      const std::string what = std::string(dtype) + " " + layer;
      EXPECT_TRUE(bitwise_equal(a.y, b.y)) << what;
      EXPECT_TRUE(bitwise_equal(a.dx, b.dx)) << what;
      ASSERT_EQ(a.activations.size(), layers->size());
      ASSERT_EQ(b.activations.size(), layers->size());
      for (size_t l = 0; l < layers->size(); ++l) {
        EXPECT_TRUE(bitwise_equal(a.activations[l], b.activations[l])) << what << " layer " << l;
        EXPECT_TRUE(bitwise_equal(a.dw[l], b.dw[l])) << what << " layer " << l;
        EXPECT_TRUE(bitwise_equal(a.db[l], b.db[l])) << what << " layer " << l;
        EXPECT_TRUE(bitwise_equal(a.conv_grads[l], b.conv_grads[l])) << what << " layer " << l;
      }
    }
  }
}

TEST(GpuDevice, ResidentStackMeasuresTheActivationsAndTheirSaving) {
  KC_REQUIRE_DEVICE();
  const Case c = stack("f32", kPlain);
  auto layers = stack_layers(c);
  ASSERT_TRUE(layers.ok());
  auto in = make_stack_inputs(c, *layers);
  ASSERT_TRUE(in.ok());
  auto cuda = gpu::make_cuda_backend();
  ASSERT_TRUE(stack_supports(*cuda, *layers).ok());
  const StackRun none = run_stack(*cuda, *layers, *in, {CheckpointPolicy{}, c.dtype});
  const StackRun sqrt = run_stack(*cuda, *layers, *in, {CheckpointPolicy{CheckpointKind::kSqrt, 0}, c.dtype});
  ASSERT_TRUE(none.status.ok() && sqrt.status.ok());
  EXPECT_GE(none.measured_peak_bytes, none.peak_bytes);
  EXPECT_GE(sqrt.measured_peak_bytes, sqrt.peak_bytes);
  EXPECT_LT(sqrt.measured_peak_bytes, none.measured_peak_bytes);
  // What the plan saves is activations; the rest of the peak (gradients in flight,
  // workspace) is common to both, up to guard bands and the recomputed segment's output.
  const int64_t planned = none.peak_bytes - sqrt.peak_bytes;
  EXPECT_GE(none.measured_peak_bytes - sqrt.measured_peak_bytes, planned / 2)
      << "none " << none.measured_peak_bytes << " sqrt " << sqrt.measured_peak_bytes << " plan saves " << planned;
  const CaseResult r = check_case(c, *cuda);
  const CheckResult* k = find_check(r, "checkpoint");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->disposition, Disposition::kPassed) << k->message;
  EXPECT_NE(k->message.find("measured saving"), std::string::npos) << k->message;
}

}  // namespace
}  // namespace kc
