// A stack's training step resident on the device (gpu/src/device_stack.cpp), label gpu:
// the same values as the host executor driving the same backend's per-layer calls, and
// device memory measured: at least the activations the plan holds at once, and less
// with sqrt checkpointing than without; a planted write into a buffer the schedule
// keeps fails the run, named. Without a usable device every test is skipped with the
// device probe's reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "device_stack.h"  // gpu/src: run_device_stack on an engine a test wraps
#include "engine.h"
#include "kc/case_io.h"
#include "kc/gpu/backends.h"
#include "kc/runner.h"
#include "require_device.h"
#include "stack/stack_exec.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

Case stack(const std::string& dtype, const std::string& layer, int depth = 9, const std::string& checkpoint = "") {
  auto cases = parse_cases("{op: stack, dtype: " + dtype + ", input: {batch: 2, channels: 3, spatial: [20, 20]}, " +
                               "stack: {depth: " + std::to_string(depth) + ", layer: " + layer +
                               (checkpoint.empty() ? "" : ", checkpoint: " + checkpoint) +
                               "}, data: {seed: 7}, deterministic: true}",
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

// The cuda engine, with a planted write into a device buffer the call was not handed,
// as the host's StackIntegrity engines do (tests/stack/stack_exec_test.cpp):
//  - kStackInput: the second forward overwrites the first forward's x (the stack's
//    input, layer 1's checkpoint under sqrt), which the recomputation reads back;
//  - kLastDx: a forward after a backward overwrites that backward's dx (the cotangent
//    the schedule holds while it recomputes the segment before);
//  - kLateWeights: the last backward (layer 1's) overwrites the last forward's w.
class PlantedWrite final : public gpu::Engine {
 public:
  enum class Bug { kStackInput, kLastDx, kLateWeights };
  explicit PlantedWrite(Bug bug) : bug_(bug), inner_(gpu::make_cuda_engine()) {}
  std::string name() const override { return "cuda-planted-write"; }
  Status available() const override { return inner_->available(); }
  Status supports(const Case& c) const override { return inner_->supports(c); }
  Status conv_forward(const ConvGeometry& g, DType dtype, bool relu, const gpu::ConvIO& io) override {
    ++forwards_;
    if (first_x_ == nullptr) first_x_ = io.x, first_w_ = io.w;
    if (bug_ == Bug::kStackInput && forwards_ == 2) scribble(first_x_);
    if (bug_ == Bug::kLastDx && last_dx_ != nullptr) scribble(last_dx_);
    last_dx_ = nullptr;
    last_w_ = io.w;
    return inner_->conv_forward(g, dtype, relu, io);
  }
  Status conv_backward(const ConvGeometry& g, DType dtype, bool relu, const gpu::ConvIO& io) override {
    KC_RETURN_IF_ERROR(inner_->conv_backward(g, dtype, relu, io));
    last_dx_ = io.dx;
    if (bug_ == Bug::kLateWeights && io.w == first_w_) scribble(last_w_);
    return ok_status();
  }
  Status pool_forward(const PoolGeometry& g, DType dtype, const gpu::PoolIO& io) override {
    return inner_->pool_forward(g, dtype, io);
  }
  Status pool_backward(const PoolGeometry& g, DType dtype, const gpu::PoolIO& io) override {
    return inner_->pool_backward(g, dtype, io);
  }
  Status check_guards() const override { return inner_->check_guards(); }
  void release_scratch() override { inner_->release_scratch(); }

 private:
  static void scribble(const void* p) {  // the first element becomes a NaN
    ASSERT_EQ(cudaMemset(const_cast<void*>(p), 0xFF, 4), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }

  Bug bug_;
  std::unique_ptr<gpu::Engine> inner_;
  int forwards_ = 0;
  const void* first_x_ = nullptr;
  const void* first_w_ = nullptr;
  const void* last_w_ = nullptr;
  const void* last_dx_ = nullptr;
};

TEST(GpuDevice, AWriteIntoAKeptBufferNoCallWasHandedFailsTheResidentStack) {
  KC_REQUIRE_DEVICE();
  const struct {
    PlantedWrite::Bug bug;
    const char* checkpoint;
    const char* says;
  } planted[] = {
      {PlantedWrite::Bug::kStackInput, "sqrt", "stack layer 1: the saved input kept for its recomputation changed"},
      {PlantedWrite::Bug::kLastDx, "sqrt",
       "stack layer 2: the cotangent of its output, held for its backward, changed while layers 1..2 were recomputed"},
      {PlantedWrite::Bug::kLateWeights, "none", "stack layer 3: its weights (w) changed during the run"},
  };
  for (const auto& p : planted) {
    SCOPED_TRACE(p.says);
    const Case c = stack("f32", kPlain, 3, p.checkpoint);  // sqrt on depth 3: segments [1, 2] and [3]
    auto layers = stack_layers(c);
    ASSERT_TRUE(layers.ok());
    auto in = make_stack_inputs(c, *layers);
    ASSERT_TRUE(in.ok());
    const StackRunOptions opt{std::get<StackParams>(c.op).checkpoint, c.dtype};
    auto right = gpu::make_cuda_engine();
    const StackRun ok = gpu::run_device_stack(*right, *layers, *in, opt);
    EXPECT_TRUE(ok.status.ok()) << ok.status.to_string();  // the same step without the planted write
    PlantedWrite engine(p.bug);
    const StackRun r = gpu::run_device_stack(engine, *layers, *in, opt);
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find(p.says), std::string::npos) << r.status.to_string();
  }
}

}  // namespace
}  // namespace kc
