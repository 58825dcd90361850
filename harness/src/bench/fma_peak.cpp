#include "bench/fma_peak.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12's own _mm512_set1_* and _mm256_set1_* initialise a vector from itself
// (`__m512d __Y = __Y;`), which -Wmaybe-uninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace kc::bench {
namespace {

// Twelve chains: enough in flight to cover an FMA's latency on two ports. acc = acc a + b
// with a just below 1 converges to b / (1 - a): no overflow, no subnormals.
constexpr int kChains = 12;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) double chains_avx512(int64_t iters, bool f64) {
  double sink = 0;
  if (f64) {
    __m512d acc[kChains], a = _mm512_set1_pd(0.999999), b = _mm512_set1_pd(1e-6);
    for (__m512d& v : acc) v = _mm512_set1_pd(1.0);
    for (int64_t i = 0; i < iters; ++i)
      for (__m512d& v : acc) v = _mm512_fmadd_pd(v, a, b);
    for (__m512d& v : acc) sink += _mm512_reduce_add_pd(v);
  } else {
    __m512 acc[kChains], a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-4f);
    for (__m512& v : acc) v = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < iters; ++i)
      for (__m512& v : acc) v = _mm512_fmadd_ps(v, a, b);
    for (__m512& v : acc) sink += _mm512_reduce_add_ps(v);
  }
  return sink;
}

__attribute__((target("avx2,fma"))) double chains_avx2(int64_t iters, bool f64) {
  double sink = 0;
  if (f64) {
    __m256d acc[kChains], a = _mm256_set1_pd(0.999999), b = _mm256_set1_pd(1e-6);
    for (__m256d& v : acc) v = _mm256_set1_pd(1.0);
    for (int64_t i = 0; i < iters; ++i)
      for (__m256d& v : acc) v = _mm256_fmadd_pd(v, a, b);
    alignas(32) double out[4];
    for (__m256d& v : acc) _mm256_store_pd(out, v), sink += out[0] + out[3];
  } else {
    __m256 acc[kChains], a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-4f);
    for (__m256& v : acc) v = _mm256_set1_ps(1.0f);
    for (int64_t i = 0; i < iters; ++i)
      for (__m256& v : acc) v = _mm256_fmadd_ps(v, a, b);
    alignas(32) float out[8];
    for (__m256& v : acc) _mm256_store_ps(out, v), sink += out[0] + out[7];
  }
  return sink;
}
#endif

template <typename T>
double chains_scalar(int64_t iters) {
  T acc[kChains];
  std::fill(acc, acc + kChains, T(1));
  for (int64_t i = 0; i < iters; ++i)
    for (T& v : acc) v = v * T(0.9999) + T(1e-4);
  double sink = 0;
  for (T v : acc) sink += v;
  return sink;
}

struct Kind {
  const char* isa;
  int lanes_f32;
  double (*run)(int64_t, bool);
};

Kind best_kind() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return {"avx512", 16, chains_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2", 8, chains_avx2};
#endif
  return {"scalar", 1, [](int64_t n, bool f64) { return f64 ? chains_scalar<double>(n) : chains_scalar<float>(n); }};
}

}  // namespace

StatusOr<Ceiling> measure_fma_peak(DType dtype, int threads) {
  if (dtype != DType::kF32 && dtype != DType::kF64) return unimplemented("fma peak: f32 and f64 only");
  const bool f64 = dtype == DType::kF64;
  const Kind k = best_kind();
  const int lanes = std::max(1, f64 ? k.lanes_f32 / 2 : k.lanes_f32);
  const int64_t iters = int64_t{16} << 20;  // about 0.1 s a run: long enough for the clock to settle
  double best = 1e300;
  std::vector<double> sinks(static_cast<size_t>(threads));
  for (int r = 0; r < 6; ++r) {  // r == 0: warm-up (clocks up, code in)
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { sinks[t] = k.run(iters, f64); });
    sinks[0] = k.run(iters, f64);
    for (std::thread& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) best = std::min(best, s);
  }
  Ceiling c;
  c.name = "host fma peak " + std::string(dtype_name(dtype));
  c.dtype = dtype;
  c.per_second = 2.0 * static_cast<double>(iters) * kChains * lanes * threads / best;
  c.detail = std::string(k.isa) + ", " + std::to_string(kChains) + " register chains, " + std::to_string(threads) +
             " threads, best of 5";
  return c;
}

}  // namespace kc::bench
