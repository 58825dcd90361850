// oneDNN matmul FLOP/s. The size is found by timing a 1024^3 multiply first and scaling
// n by the cube root of the time ratio (rounded to 256, at most 4096 so that the three
// matrices stay under 200 MiB in f32); the inputs hold 0.5 in every element, a value
// every dtype represents exactly (no subnormal slows a multiply); B, all 0.5 in every
// layout, needs no reorder. The OpenMP threads are released after (openmp_threads.h).
#include "gemm_ceilings.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "onednn_memory.h"
#include "onednn_status.h"
#include "openmp_threads.h"

namespace kc::onednn {
namespace {

constexpr double kTargetSeconds = 0.1;
constexpr int kRuns = 8;
constexpr memory::dim kProbe = 1024, kMax = 4096, kStep = 256;

struct Gemm {
  dnnl::matmul::primitive_desc pd;
  memory a, b, c;
};

void fill_half(const memory& m, memory::data_type t) {
  const size_t n = m.get_desc().get_size() / memory::data_type_size(t);
  if (t == memory::data_type::f32) {
    std::fill_n(static_cast<float*>(m.get_data_handle()), n, 0.5f);
    return;
  }
  const uint16_t half = t == memory::data_type::bf16 ? 0x3F00 : 0x3800;  // 0.5 in bf16 and f16
  std::fill_n(static_cast<uint16_t*>(m.get_data_handle()), n, half);
}

Gemm make_gemm(Context& ctx, memory::dim n, memory::data_type t) {
  const memory::desc d({n, n}, t, memory::format_tag::ab), any({n, n}, t, memory::format_tag::any);
  // B in the layout the matmul prefers (packed once, as a framework keeps weights):
  // with B plain, the kernel repacks it in every multiply and reaches about half the rate.
  const dnnl::matmul::primitive_desc pd({d, any, d}, ctx.engine);
  Gemm g{pd, memory(d, ctx.engine), memory(pd.weights_desc(), ctx.engine), memory(d, ctx.engine)};
  fill_half(g.a, t);
  fill_half(g.b, t);
  return g;
}

double seconds_of(Context& ctx, const dnnl::matmul& p, const Gemm& g) {
  const auto start = std::chrono::steady_clock::now();
  p.execute(ctx.stream, {{DNNL_ARG_SRC, g.a}, {DNNL_ARG_WEIGHTS, g.b}, {DNNL_ARG_DST, g.c}});
  ctx.stream.wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// n such that one multiply takes about kTargetSeconds, from a probe that took t.
memory::dim sized(double t) {
  const double n = static_cast<double>(kProbe) * std::cbrt(kTargetSeconds / std::max(t, 1e-6));
  return std::clamp(static_cast<memory::dim>(std::lround(n / kStep)) * kStep, kStep, kMax);
}

// The best FLOP/s of dtype t; none when oneDNN has no matmul of it but its reference.
std::optional<Ceiling> measure(Context& ctx, DType dtype) {
  const memory::data_type t = *data_type(dtype);
  Gemm probe = make_gemm(ctx, kProbe, t);
  if (std::string(probe.pd.impl_info_str()).rfind("ref", 0) == 0) return std::nullopt;
  const dnnl::matmul probe_p(probe.pd);
  (void)seconds_of(ctx, probe_p, probe);  // warm-up: threads, pages, the kernel's code
  const memory::dim sized_n = sized(seconds_of(ctx, probe_p, probe));
  // Several sizes, the best of them: a multiply whose operands stay in the cache can run
  // faster than a large one, and so can a small conv; the ceiling must be above both.
  Ceiling c;
  for (memory::dim n : {memory::dim{512}, memory::dim{768}, kProbe, sized_n}) {
    const Gemm g = make_gemm(ctx, n, t);
    const dnnl::matmul p(g.pd);
    double best = seconds_of(ctx, p, g);  // warm-up
    for (int r = 0; r < kRuns || (best * r < 0.05 && r < 64); ++r) best = std::min(best, seconds_of(ctx, p, g));
    const double rate = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best;
    if (rate <= c.per_second) continue;
    c.per_second = rate;
    c.detail = "M=N=K=" + std::to_string(n) + " (best of 512, 768, 1024, " + std::to_string(sized_n) + "), " +
               std::string(g.pd.impl_info_str());
  }
  c.name = "onednn gemm " + std::string(dtype_name(dtype));
  c.device = "cpu";
  c.dtype = dtype;
  return c;
}

StatusOr<std::vector<Ceiling>> measure_all() {
  std::vector<Ceiling> out;
  KC_RETURN_IF_ERROR(guarded("engine", [&] {
    Context ctx;
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      std::optional<Ceiling> c;
      const Status s = guarded("matmul", [&] {
        c = measure(ctx, t);
        return ok_status();
      });
      if (s.code() == StatusCode::kUnimplemented) continue;  // oneDNN has no matmul of t here
      KC_RETURN_IF_ERROR(s);
      if (c) out.push_back(*c);
    }
    return ok_status();
  }));
  return out;
}

}  // namespace

StatusOr<std::vector<Ceiling>> gemm_ceilings() {
  static std::once_flag once;
  static std::optional<StatusOr<std::vector<Ceiling>>> result;
  std::call_once(once, [] { result.emplace(measure_all()); });
  release_cpu_threads();  // the caller may fork workers next (kcheck bench does)
  return *result;
}

}  // namespace kc::onednn
