#include "bench/judge.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace kc::bench {
namespace {

// How far a median may pass the best run of a ceiling before it is a measurement bug
// and not the clock: a shared machine's run-to-run variation of a GEMM's best, as seen
// between runs of one ceiling here (docs/bench.md).
constexpr double kCeilingNoise = 0.10;

bool half(DType d) { return d == DType::kF16 || d == DType::kBF16; }

// The fastest GEMM an op in `compute` could be measured against: its own dtype's, and
// for 16-bit storage also f32's (a CPU without 16-bit units runs those in f32).
const Ceiling* flops_ceiling(const std::vector<Ceiling>& ceilings, const BenchEntry& e) {
  const Ceiling* best = best_ceiling(ceilings, e.device, true, e.compute);
  if (half(e.compute)) {
    const Ceiling* f32 = best_ceiling(ceilings, e.device, true, DType::kF32);
    if (f32 != nullptr && (best == nullptr || f32->per_second > best->per_second)) best = f32;
  }
  return best;
}

// Whether the op's data came from memory: one instance larger than the cache, or cold
// rotated instances whose bytes exceed twice the cache. Fewer (the caps on instances) may
// still hit in a large cache, where no bandwidth we measure bounds them.
bool from_memory(const BenchEntry& e) {
  const int64_t each = e.held_bytes + e.workspace_bytes;
  if (e.cache_bytes <= 0 || e.mode != "cold") return false;
  return each > e.cache_bytes || each * e.instances > 2 * e.cache_bytes;
}

void roofline(BenchEntry& e, const std::vector<Ceiling>& ceilings) {
  if (!e.error.empty() || e.stats.median <= 0.0) return;
  const Ceiling* f = flops_ceiling(ceilings, e);
  const Ceiling* b = from_memory(e) ? best_ceiling(ceilings, e.device, false, std::nullopt) : nullptr;
  const double t_flops = f != nullptr ? e.flops / e.transform_saving / f->per_second : 0.0;
  const double t_bytes = b != nullptr ? e.bytes / b->per_second : 0.0;
  if (f == nullptr && b == nullptr) return;
  e.ceiling = t_bytes > t_flops ? b->name : f->name;
  e.fraction = std::max(t_flops, t_bytes) / e.stats.median;
  e.fraction_over_one = e.fraction > 1.0 + kCeilingNoise && !e.transform_unbounded;
}

// The reference computes in f64 on one thread: the Eigen GEMM on one thread, else the
// f64 one.
const Ceiling* reference_gemm(const std::vector<Ceiling>& ceilings) {
  const Ceiling* one = best_ceiling(ceilings, "cpu", true, DType::kF64, "eigen gemm f64 1 thread");
  return one != nullptr ? one : best_ceiling(ceilings, "cpu", true, DType::kF64, "eigen gemm");
}

std::string key_of(const BenchEntry& e, const std::string& backend) {
  return e.case_name + "\x1f" + e.file + "\x1f" + backend + "\x1f" + e.op + "\x1f" + e.mode;
}

double geomean(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

std::string text(const char* fmt, auto... args) {
  char buf[200];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

const Ceiling* best_ceiling(const std::vector<Ceiling>& ceilings, const std::string& device, bool flops,
                            std::optional<DType> dtype, const std::string& name_prefix) {
  const Ceiling* best = nullptr;
  for (const Ceiling& c : ceilings) {
    if (c.device != device || c.flops != flops || (flops && c.dtype != dtype)) continue;
    if (c.name.rfind(name_prefix, 0) != 0) continue;
    if (best == nullptr || c.per_second > best->per_second) best = &c;
  }
  return best;
}

std::string peer_of(const BenchEntry& e) {
  if (e.backend == "reference") return e.op.rfind("pool", 0) != 0 ? "eigen gemm f64" : "";  // a GEMM's work
  const std::string peer = e.device == "gpu" ? "cudnn" : "onednn";
  return e.backend == peer ? std::string() : peer;
}

void judge_entries(std::vector<BenchEntry>& entries, const std::vector<Ceiling>& ceilings) {
  std::map<std::string, const BenchEntry*> by_key;
  for (const BenchEntry& e : entries) {
    if (e.error.empty() && e.stats.median > 0.0) by_key[key_of(e, e.backend)] = &e;
  }
  for (BenchEntry& e : entries) {
    roofline(e, ceilings);
    e.peer = peer_of(e);
    if (e.peer.empty() || !e.error.empty() || e.stats.median <= 0.0) continue;
    if (e.backend == "reference") {
      if (const Ceiling* g = reference_gemm(ceilings); g && e.flops > 0) {
        e.ratio_to_peer = e.flops / e.stats.median / g->per_second;
        e.peer = g->name;
      }
      continue;
    }
    if (auto it = by_key.find(key_of(e, e.peer)); it != by_key.end())
      e.ratio_to_peer = it->second->stats.median / e.stats.median;
  }
}

std::vector<TargetResult> judge_targets(const std::vector<BenchEntry>& entries, const std::vector<Ceiling>& ceilings) {
  std::vector<TargetResult> out;
  auto gemm_ratio = [&](const std::string& key, const std::string& what, const std::string& backend,
                        const std::string& prefix, double goal) {
    std::vector<double> ratios;
    for (const BenchEntry& e : entries) {
      // Dense convs (groups 1): a depthwise conv is no GEMM's work, so no GEMM's share.
      if (e.backend != backend || e.op != "conv_forward" || e.geometry.find(" G1 ") == std::string::npos ||
          !e.error.empty() || e.stats.median <= 0.0)
        continue;
      const Ceiling* g =
          backend == "reference" ? reference_gemm(ceilings) : best_ceiling(ceilings, e.device, true, e.compute, prefix);
      if (g != nullptr && e.flops > 0) ratios.push_back(e.flops / e.stats.median / g->per_second);
    }
    if (ratios.empty()) return;
    const double v = geomean(ratios);
    out.push_back({key, what, text(">= %.2f", goal), text("geometric mean over %zu dense conv entries", ratios.size()),
                   v, v >= goal});
  };
  gemm_ratio("onednn_conv_vs_gemm", "onednn conv forward / its GEMM ceiling", "onednn", "onednn gemm", 0.5);
  gemm_ratio("reference_conv_vs_eigen", "reference conv forward / Eigen GEMM (f64, one thread)", "reference",
             "eigen gemm", 0.40);
  gpu_targets(entries, ceilings, out);
  int64_t timed = 0, failed = 0, over = 0;
  for (const BenchEntry& e : entries) {
    if (!e.error.empty() || !e.skipped.empty()) continue;
    ++timed;
    failed += e.recheck_failed;
    over += e.fraction_over_one;
  }
  if (timed > 0) {
    out.push_back({"rechecked", "timed outputs re-checked against the oracle", "0 failed",
                   text("%lld of %lld entries failed", (long long)failed, (long long)timed),
                   static_cast<double>(failed), failed == 0});
    out.push_back({"ceiling_fraction", "entries above their ceiling (a measurement bug)", "0",
                   text("%lld of %lld entries above 1.10 (1.0 and the clock's 10%)", (long long)over, (long long)timed),
                   static_cast<double>(over), over == 0});
  }
  return out;
}

}  // namespace kc::bench
