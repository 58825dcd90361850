// A training step (forward + backward) of a 16-layer stack on the reference, without
// checkpointing and with sqrt checkpointing: 16 layers of 3x3 SAME conv + bias + relu,
// 16 channels, N=2, 32x32, f32 storage. The sqrt entry recomputes 12 of 16 layer
// forwards (K = 4), so its time over the plain one should stay under about 1.35
// (a layer's backward costs about two forwards); the counters give each run's peak
// activation bytes and the sqrt policy's bound.
#include <benchmark/benchmark.h>

#include "stack/stack_exec.h"

namespace {

kc::Case bench_case(kc::CheckpointPolicy p) {
  kc::Case c;
  c.dtype = kc::DType::kF32;
  c.input = {2, 16, {32, 32}};
  kc::StackParams s;
  s.depth = 16;
  s.conv.out_channels = 16;
  s.conv.kernel = {3, 3};
  s.conv.padding.kind = kc::PadKind::kSame;
  s.conv.bias = true;
  s.relu = true;
  s.checkpoint = p;
  c.op = s;
  c.data.seed = 5;
  return c;
}

void stack_step(benchmark::State& state, kc::CheckpointPolicy p) {
  const kc::Case c = bench_case(p);
  const auto layers = kc::stack_layers(c);
  const auto in = kc::make_stack_inputs(c, *layers);
  auto ref = kc::make_reference_backend();
  kc::StackRun run;
  for (auto _ : state) {
    run = kc::run_stack(*ref, *layers, *in, {p, c.dtype, true, false});
    benchmark::DoNotOptimize(run.dx.data.data());
  }
  if (!run.status.ok()) state.SkipWithError(run.status.to_string().c_str());
  const kc::CheckpointPlan plan = kc::plan_checkpoints(*layers, {kc::CheckpointKind::kSqrt, 0}, c.dtype);
  state.counters["peak_activation_bytes"] = static_cast<double>(run.peak_bytes);
  state.counters["sqrt_bound_bytes"] = static_cast<double>(plan.bound_bytes);
  state.counters["recomputed_layers"] = static_cast<double>(run.recomputations);
}

void BM_StackStepNone(benchmark::State& state) { stack_step(state, {}); }
void BM_StackStepSqrt(benchmark::State& state) { stack_step(state, {kc::CheckpointKind::kSqrt, 0}); }
BENCHMARK(BM_StackStepNone)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StackStepSqrt)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
