#include "bench/ceilings.h"

#include "bench/fma_peak.h"

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace kc::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Runs body(t) on threads 0..threads-1 and returns the wall time of the slowest.
template <typename Body>
double timed_parallel(int threads, Body body) {
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string text(const char* fmt, auto... args) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

template <typename T>
double gemm_seconds(int64_t n, int reps, int threads) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const Mat a = Mat::Random(n, n), b = Mat::Random(n, n);
  Mat c = Mat::Zero(n, n);
  const int64_t cols = (n + threads - 1) / threads;
  auto slice = [&](int t) {
    const int64_t first = std::min(n, t * cols), width = std::min(n, first + cols) - first;
    if (width > 0) c.middleCols(first, width).noalias() = a * b.middleCols(first, width);
  };
  double best = 1e300;
  for (int r = 0; r <= reps; ++r) {  // r == 0: warm-up
    const double s = timed_parallel(threads, slice);
    if (r > 0) best = std::min(best, s);
  }
  return best;
}

}  // namespace

Ceiling measure_triad(int64_t elements, int reps, int threads) {
  std::vector<double> a(static_cast<size_t>(elements)), b(a.size(), 1.0), c(a.size(), 2.0);
  const int64_t chunk = (elements + threads - 1) / threads;
  auto slice = [&](int t) {
    const int64_t first = std::min(elements, t * chunk), last = std::min(elements, first + chunk);
    for (int64_t i = first; i < last; ++i) a[i] = b[i] + 3.0 * c[i];
  };
  double best = 1e300;
  for (int r = 0; r <= reps; ++r) {
    const double s = timed_parallel(threads, slice);
    if (r > 0) best = std::min(best, s);
  }
  Ceiling ce;
  ce.name = "host triad";
  ce.flops = false;
  ce.per_second = 24.0 * static_cast<double>(elements) / best;
  ce.detail = text("3 x %lld doubles, %d threads, best of %d", static_cast<long long>(elements), threads, reps);
  return ce;
}

StatusOr<Ceiling> measure_eigen_gemm(DType dtype, int64_t n, int reps, int threads) {
  if (dtype != DType::kF64 && dtype != DType::kF32) return unimplemented("eigen gemm: f64 and f32 only");
  const double s =
      dtype == DType::kF64 ? gemm_seconds<double>(n, reps, threads) : gemm_seconds<float>(n, reps, threads);
  Ceiling ce;
  ce.name = "eigen gemm " + std::string(dtype_name(dtype));
  ce.dtype = dtype;
  ce.per_second = 2.0 * static_cast<double>(n) * n * n / s;
  ce.detail = text("%lld^3, %d threads, best of %d", static_cast<long long>(n), threads, reps);
  return ce;
}

namespace {

// The best of several sizes: operands that stay in the cache may run faster than large
// ones, and a ceiling must be above every op measured against it.
StatusOr<Ceiling> best_eigen_gemm(DType dtype, int threads) {
  StatusOr<Ceiling> best = unimplemented("no size measured");
  for (int64_t n : {256, 512, 1024}) {
    StatusOr<Ceiling> g = measure_eigen_gemm(dtype, n, n < 1024 ? 10 : 4, threads);
    if (g.ok() && (!best.ok() || g->per_second > best->per_second)) best = std::move(g);
  }
  if (best.ok()) best->detail += " (best of 256^3, 512^3, 1024^3)";
  return best;
}

}  // namespace

std::vector<Ceiling> measure_host_ceilings(int threads) {
  std::vector<Ceiling> out;
  // Three arrays of a quarter of the cache each in elements, i.e. 6x the cache in bytes,
  // between 4 Mi and 32 Mi elements (96 MiB to 768 MiB in all).
  const int64_t elements = std::clamp<int64_t>(host_cache_bytes() / 4, int64_t{4} << 20, int64_t{32} << 20);
  out.push_back(measure_triad(elements, 5, threads));
  for (DType d : {DType::kF64, DType::kF32}) {
    if (StatusOr<Ceiling> g = best_eigen_gemm(d, threads); g.ok()) out.push_back(*g);
  }
  for (DType d : {DType::kF64, DType::kF32}) {
    if (StatusOr<Ceiling> f = measure_fma_peak(d, threads); f.ok()) out.push_back(*f);
  }
  // The reference runs on one thread: its own yardstick is the GEMM on one.
  if (threads > 1) {
    if (StatusOr<Ceiling> g = best_eigen_gemm(DType::kF64, 1); g.ok()) {
      g->name += " 1 thread";
      out.push_back(*g);
    }
  }
  return out;
}

int64_t host_cache_bytes() {
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE); l3 > 0) return l3;
#endif
  std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index3/size");
  int64_t kib = 0;
  if (f >> kib && kib > 0) return kib * 1024;
  return int64_t{32} << 20;
}

int64_t host_cache_bytes_cached() {
  static const int64_t bytes = host_cache_bytes();
  return bytes;
}

}  // namespace kc::bench
