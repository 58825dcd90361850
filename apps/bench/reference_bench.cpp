// The reference conv forward in f64 against an Eigen f64 GEMM of matching size:
// N=4, C=K=64, 64x64, 3x3, SAME. Per sample the conv is a [64 x 576] * [576 x 4096]
// product after im2col, so the GEMM entry times exactly those products (4 of them) and
// the ratio says what the im2col, padding and bias cost on top of the GEMM.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <random>

#include "kc/ref/conv.h"
#include "kc/shape.h"

namespace {

constexpr int64_t kN = 4, kC = 64, kK = 64, kHW = 64, kR = 3;

kc::Case bench_case() {
  kc::Case c;
  c.dtype = kc::DType::kF64;
  c.input = {kN, kC, {kHW, kHW}};
  kc::ConvParams p;
  p.out_channels = kK;
  p.kernel = {kR, kR};
  p.padding = {kc::PadKind::kSame, {}};
  c.op = p;
  return c;
}

kc::Tensor random_tensor(const kc::Dims& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  kc::Tensor t = kc::Tensor::zeros(kc::DType::kF64, shape);
  for (double& v : t.data) v = u(rng);
  return t;
}

double conv_flops() { return 2.0 * kN * kK * kHW * kHW * kC * kR * kR; }

void set_gflops(benchmark::State& state, double flops) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_RefConvForward(benchmark::State& state) {
  const kc::ConvGeometry g = *kc::conv_geometry(bench_case());
  const kc::Tensor x = random_tensor(g.x_shape(), 1), w = random_tensor(g.w_shape(), 2);
  for (auto _ : state) benchmark::DoNotOptimize(kc::ref::conv_forward(g, x, w, nullptr));
  set_gflops(state, conv_flops());
}
BENCHMARK(BM_RefConvForward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EigenGemm(benchmark::State& state) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const RowMat w = RowMat::Random(kK, kC * kR * kR);
  const RowMat col = RowMat::Random(kC * kR * kR, kHW * kHW);
  RowMat y(kK, kHW * kHW);
  for (auto _ : state) {
    for (int64_t n = 0; n < kN; ++n) {
      y.noalias() = w * col;
      benchmark::DoNotOptimize(y.data());
    }
  }
  set_gflops(state, conv_flops());
}
BENCHMARK(BM_EigenGemm)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
