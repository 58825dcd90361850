#include "targets.h"

#include <cstdio>

namespace kc::bench {
namespace {

constexpr Target kTargets[] = {
    {"conv_vs_gemm",
     "reference conv fwd / Eigen GEMM (f64)",
     TargetKind::kGflopsAtLeast,
     "BM_RefConvForward",
     "BM_EigenGemm",
     {},
     {},
     0.40},
    {"gradcheck_seconds",
     "directional gradcheck, 1M-element conv",
     TargetKind::kSecondsAtMost,
     "BM_DirectionalGradcheck",
     {},
     {},
     {},
     2.0},
    {"stack_sqrt_vs_none",
     "stack step sqrt / none (reference)",
     TargetKind::kTimeRatioAtMost,
     "BM_StackStepSqrt",
     "BM_StackStepNone",
     {},
     {},
     1.35},
    {"stack_sqrt_peak",
     "stack sqrt peak activation bytes",
     TargetKind::kCounterWithinBound,
     "BM_StackStepSqrt",
     {},
     "peak_activation_bytes",
     "sqrt_bound_bytes",
     0.0},
};

const Entry* find(const Entries& entries, std::string_view name) {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

std::optional<double> counter(const Entry* e, std::string_view name) {
  if (e == nullptr) return std::nullopt;
  auto it = e->counters.find(std::string(name));
  if (it == e->counters.end()) return std::nullopt;
  return it->second;
}

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string str(std::string_view s) { return std::string(s); }

}  // namespace

std::span<const Target> targets() { return kTargets; }

std::string format_value(const Target& t, double value) {
  return t.kind == TargetKind::kCounterWithinBound ? format("%.0f", value) : format("%.3f", value);
}

std::optional<Measure> evaluate(const Target& t, const Entries& entries) {
  const Entry* a = find(entries, t.a);
  if (a == nullptr) return std::nullopt;
  Measure m;
  m.limit = t.target;
  switch (t.kind) {
    case TargetKind::kGflopsAtLeast: {
      const auto ga = counter(a, "GFLOP/s"), gb = counter(find(entries, t.b), "GFLOP/s");
      if (!ga || !gb || !(*ga > 0.0) || !(*gb > 0.0)) return std::nullopt;
      m.value = *ga / *gb;
      m.met = m.value >= t.target;
      m.detail = format("%s %.2f / %s %.2f GFLOP/s", str(t.a).c_str(), *ga, str(t.b).c_str(), *gb);
      m.goal = format(">= %.2f", t.target);
      return m;
    }
    case TargetKind::kTimeRatioAtMost: {
      const Entry* b = find(entries, t.b);
      if (b == nullptr || !(b->seconds > 0.0)) return std::nullopt;
      m.value = a->seconds / b->seconds;
      m.met = m.value <= t.target;
      m.detail =
          format("%s %.2f ms / %s %.2f ms", str(t.a).c_str(), 1e3 * a->seconds, str(t.b).c_str(), 1e3 * b->seconds);
      m.goal = format("<= %.2f", t.target);
      return m;
    }
    case TargetKind::kSecondsAtMost:
      m.value = a->seconds;
      m.met = m.value <= t.target;
      m.detail = format("%s, seconds", str(t.a).c_str());
      m.goal = format("<= %.2f s", t.target);
      return m;
    case TargetKind::kCounterWithinBound: {
      const auto v = counter(a, t.counter), bound = counter(a, t.bound);
      if (!v || !bound) return std::nullopt;
      m.value = *v;
      m.limit = *bound;
      m.met = *v <= *bound;
      m.detail = format("%s %s", str(t.a).c_str(), str(t.counter).c_str());
      m.goal = format("<= %.0f (%s)", *bound, str(t.bound).c_str());
      return m;
    }
  }
  return std::nullopt;
}

}  // namespace kc::bench
