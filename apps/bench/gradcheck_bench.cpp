// BM_DirectionalGradcheck: the gradcheck check's directional path (8 random directions,
// Richardson-extrapolated central differences of the oracle's f64 forward, 4 forwards
// per direction, directions spread over the cores) on the reference backend, for the
// conv of reference_bench.cpp: N=4, C=K=64, 64x64, 3x3, SAME, f64.
// Target: <= 2 s per run (one full check; stated here, not asserted in a test: it
// depends on the machine's cores: CPU is process time over all threads, about 32
// reference forwards). The setup (fill, oracle, absolute pass) is untimed.
#include <benchmark/benchmark.h>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "checks/gradcheck.h"
#include "core/fill.h"
#include "judge/absolute_pass.h"
#include "kc/backend.h"

namespace {

kc::Case gradcheck_case() {
  kc::Case c;
  c.dtype = kc::DType::kF64;
  c.input = {4, 64, {64, 64}};
  kc::ConvParams p;
  p.out_channels = 64;
  p.kernel = {3, 3};
  p.padding = {kc::PadKind::kSame, {}};
  c.op = p;
  c.data.seed = 1;
  return c;
}

void BM_DirectionalGradcheck(benchmark::State& state) {
  const kc::Case c = gradcheck_case();
  const kc::OpGeometry geo = *kc::op_geometry(c);
  const kc::OpInputs in = *kc::make_inputs(c);
  auto oracle = kc::make_reference_backend();
  const kc::OpOutputs ref = kc::invoke(*oracle, c, geo, in);
  const kc::OpOutputs abs = kc::absolute_pass(c, geo, in, ref);
  const kc::CheckContext ctx{c, geo, in, *oracle, true, ref, abs, ref};
  const kc::checks::GradcheckOptions eight{.full_limit = 0, .directions = 8};
  for (auto _ : state) {
    const kc::CheckResult r = kc::checks::gradcheck_with(ctx, eight);
    if (r.disposition != kc::Disposition::kPassed) {
      state.SkipWithError(("gradcheck did not pass: " + r.message).c_str());
      break;
    }
  }
}
BENCHMARK(BM_DirectionalGradcheck)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
