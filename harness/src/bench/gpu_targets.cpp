// The GPU tuning targets of our `cuda` kernels, each a ratio within one run on one device
// (docs/bench.md, "Targets"): conv passes against cuDNN's best on ResNet-50's 3x3 layers
// in bf16 (forward at least 0.5, backward data and weight 0.35) and the f32 forward
// (0.3), memory-bound ops against the measured copy bandwidth, training and fused
// forwards against their plain twins. Geometric means over the entries that have both
// figures; a target whose entries the run lacks is left out.
#include <cmath>
#include <cstdio>
#include <functional>

#include "bench/judge.h"

namespace kc::bench {
namespace {

bool timed(const BenchEntry& e) { return e.error.empty() && e.stats.median > 0.0; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// value(e) for every timed cuda entry of `op` it gives a positive figure for.
void add(std::vector<TargetResult>& out, const std::vector<BenchEntry>& entries, const std::string& key,
         const std::string& what, const std::string& op, bool at_least, double goal,
         const std::function<double(const BenchEntry&)>& value) {
  double logs = 0.0;
  int n = 0;
  for (const BenchEntry& e : entries) {
    if (e.backend != "cuda" || e.op != op || !timed(e)) continue;
    const double v = value(e);
    if (!(v > 0.0) || !std::isfinite(v)) continue;
    logs += std::log(v);
    ++n;
  }
  if (n == 0) return;
  const double v = std::exp(logs / n);
  out.push_back({key, what, fmt(at_least ? ">= %.2f" : "<= %.2f", goal),
                 "geometric mean over " + std::to_string(n) + " entries", v, at_least ? v >= goal : v <= goal});
}

// The timed twin of e (same backend, mode and geometry) with another op.
const BenchEntry* twin(const std::vector<BenchEntry>& entries, const BenchEntry& e, const std::string& op) {
  for (const BenchEntry& t : entries)
    if (timed(t) && t.backend == e.backend && t.mode == e.mode && t.geometry == e.geometry && t.op == op) return &t;
  return nullptr;
}

}  // namespace

void gpu_targets(const std::vector<BenchEntry>& entries, const std::vector<Ceiling>& ceilings,
                 std::vector<TargetResult>& out) {
  auto resnet_ratio = [](DType dtype) {
    return [dtype](const BenchEntry& e) {
      const bool layer = e.file.find("resnet50") != std::string::npos && e.dtype == dtype;
      return layer ? e.ratio_to_peer : NAN;
    };
  };
  add(out, entries, "cuda_conv_forward_vs_cudnn", "cuda bf16 conv forward / cudnn (ResNet-50 3x3)", "conv_forward",
      true, 0.50, resnet_ratio(DType::kBF16));
  add(out, entries, "cuda_conv_backward_data_vs_cudnn", "cuda bf16 backward data / cudnn (ResNet-50 3x3)",
      "conv_backward_data", true, 0.35, resnet_ratio(DType::kBF16));
  add(out, entries, "cuda_conv_backward_weight_vs_cudnn", "cuda bf16 backward weight / cudnn (ResNet-50 3x3)",
      "conv_backward_weight", true, 0.35, resnet_ratio(DType::kBF16));
  add(out, entries, "cuda_f32_conv_forward_vs_cudnn", "cuda f32 conv forward / cudnn (ResNet-50 3x3)", "conv_forward",
      true, 0.30, resnet_ratio(DType::kF32));
  const Ceiling* copy = best_ceiling(ceilings, "gpu", false, std::nullopt);
  auto of_copy = [copy](const BenchEntry& e) { return copy ? e.bytes / e.stats.median / copy->per_second : NAN; };
  add(out, entries, "cuda_pool_forward_vs_copy", "cuda max pool forward / copy bandwidth", "pool_inference", true, 0.6,
      of_copy);
  add(out, entries, "cuda_bias_gradient_vs_copy", "cuda bias gradient / copy bandwidth", "conv_backward_bias", true,
      0.5, of_copy);
  add(out, entries, "cuda_pool_training_over_inference", "cuda max pool training / inference time", "pool_training",
      false, 1.15, [&entries](const BenchEntry& e) {
        const BenchEntry* inf = twin(entries, e, "pool_inference");
        return inf ? e.stats.median / inf->stats.median : NAN;
      });
  add(out, entries, "cuda_fused_over_conv", "cuda conv+bias+relu / the bare conv time", "fused_forward", false, 1.05,
      [&entries](const BenchEntry& e) {
        const BenchEntry* bare = twin(entries, e, "conv_forward");
        return bare ? e.stats.median / bare->stats.median : NAN;
      });
}

}  // namespace kc::bench
