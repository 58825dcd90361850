// kcheck explain CASE: what a case asks for, resolved: shapes, padding per dim, FLOPs,
// bytes moved, memory for a training step, receptive field and border erosion.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "backend/invoke.h"
#include "cli.h"
#include "core/ops/stack.h"
#include "core/validate.h"
#include "kc/case_io.h"
#include "kc/overloaded.h"
#include "kc/report.h"
#include "stack/stack.h"

namespace kc::cli {
namespace {

// A byte count in the largest binary unit that keeps it at 1 or more (B, KiB, MiB, GiB).
std::string mib(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024.0) bytes /= 1024.0, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

void print_dims(const SpatialGeometry& g) {
  std::printf("  %-4s %6s %6s %6s %6s %9s %6s %9s %8s\n", "dim", "in", "kernel", "stride", "dilat", "pad lo/hi", "out",
              "receptive", "erosion");
  for (size_t i = 0; i < g.dims.size(); ++i) {
    const DimGeometry& d = g.dims[i];
    // Erosion: input positions with no output centred over them, i.e. in - out*stride
    // (0 for SAME with stride 1; d*(k-1) for valid).
    const long long erosion = std::max<long long>(0, d.in - d.out * d.stride);
    std::printf("  %-4zu %6lld %6lld %6lld %6lld %4lld/%-4lld %6lld %9lld %8lld\n", i, (long long)d.in,
                (long long)d.kernel, (long long)d.stride, (long long)d.dilation, (long long)d.pad_lo,
                (long long)d.pad_hi, (long long)d.out, (long long)d.extent(), erosion);
  }
}

void explain_conv(const Case& c, const ConvGeometry& g) {
  const double es = storage_bytes(c.dtype);
  const double x = element_count(g.x_shape()), w = element_count(g.w_shape()), y = element_count(g.y_shape());
  const double b = g.bias ? static_cast<double>(element_count(g.b_shape())) : 0.0;
  const double macs = static_cast<double>(g.batch) * g.out_channels * g.spatial.out_count() * g.reduction_length();
  std::printf("  x %s  w %s%s  ->  y %s\n", dims_to_string(g.x_shape()).c_str(), dims_to_string(g.w_shape()).c_str(),
              g.bias ? (" b " + dims_to_string(g.b_shape())).c_str() : "", dims_to_string(g.y_shape()).c_str());
  std::printf("  groups %lld (Cin/G %lld, Cout/G %lld), padding mode %s\n", (long long)g.groups,
              (long long)g.in_per_group(), (long long)g.out_per_group(),
              std::string(padding_mode_name(g.mode)).c_str());
  print_dims(g.spatial);
  std::printf("  FLOPs: forward %.4g, backward data %.4g, backward weight %.4g\n", 2 * macs, 2 * macs, 2 * macs);
  std::printf("  bytes (%s): forward reads %s, writes %s\n", std::string(dtype_name(c.dtype)).c_str(),
              mib((x + w + b) * es).c_str(), mib(y * es).c_str());
  std::printf("  training step memory: %s = %s\n", g.bias ? "x, w, b, y, dy, dx, dw, db" : "x, w, y, dy, dx, dw",
              mib((2 * x + 2 * w + 2 * b + 2 * y) * es).c_str());
}

std::string extent(const Dims& shape) {
  std::string s;
  for (size_t i = 2; i < shape.size(); ++i) s += (i > 2 ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// Receptive field per dim: rf += (extent - 1) * jump, jump *= stride, over every window.
// Deep strided stacks overflow int64 (stride 2 doubles the jump each layer): the sums
// saturate, and a dim whose true value is past INT64_MAX is written as such.
std::string receptive_field(const std::vector<StackLayer>& layers) {
  const size_t rank = layers.front().conv.spatial.dims.size();
  Dims rf(rank, 1), jump(rank, 1);
  std::vector<bool> over(rank, false);
  for (const StackLayer& l : layers) {
    for (size_t i = 0; i < rank; ++i) {
      for (const SpatialGeometry* g : {&l.conv.spatial, l.pool ? &l.pool->spatial : nullptr}) {
        if (g == nullptr) continue;
        int64_t grow = 0;
        const bool clipped = __builtin_mul_overflow(g->dims[i].extent() - 1, jump[i], &grow) ||
                             __builtin_add_overflow(rf[i], grow, &rf[i]);
        if (clipped) rf[i] = INT64_MAX, over[i] = true;
        jump[i] = saturating_mul(jump[i], g->dims[i].stride);
      }
    }
  }
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    s += (i ? ", " : "") + (over[i] ? std::string("more than 2^63 - 1") : std::to_string(rf[i]));
  }
  return s + "]";
}

// Every layer's input and output shape; `last_note` follows the last row.
void print_layers(const std::vector<StackLayer>& layers, const char* last_note = "") {
  std::printf("  %-6s %-16s %-16s\n", "layer", "in", "out");
  for (size_t l = 0; l < layers.size(); ++l) {
    const StackLayer& L = layers[l];
    const Dims out = L.out_shape();
    const bool empty = std::any_of(out.begin() + 2, out.end(), [](int64_t d) { return d < 1; });
    std::printf("  %-6zu %-16s %-16s%s\n", l + 1, dims_to_string(L.in_shape()).c_str(),
                empty ? "empty" : dims_to_string(out).c_str(), l + 1 == layers.size() ? last_note : "");
  }
}

void print_stack_params(const StackParams& p) {
  std::printf("  depth %lld, layer: conv%s%s%s, checkpoint %s\n", (long long)p.depth, p.conv.bias ? " + bias" : "",
              p.relu ? " + relu" : "", p.pool ? " + maxpool" : "", checkpoint_name(p.checkpoint).c_str());
}

void explain_stack(const Case& c) {
  const auto layers = stack_layers(c);
  const StackParams& p = std::get<StackParams>(c.op);
  print_stack_params(p);
  print_layers(*layers);
  const Dims in = layers->front().in_shape(), out = layers->back().out_shape();
  std::string lost;
  for (size_t i = 2; i < in.size(); ++i) lost += (i > 2 ? ", " : "") + std::to_string(in[i] - out[i]);
  std::printf("  extent %s -> %s after %zu layers; erosion: %s pixels lost per dimension\n", extent(in).c_str(),
              extent(out).c_str(), layers->size(), lost.c_str());
  std::printf("  receptive field: %s\n", receptive_field(*layers).c_str());
  std::printf("  activation memory for training (saved for backward):\n  %-10s", "policy");
  const DType dtypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16};
  for (DType d : dtypes) std::printf(" %12s", std::string(dtype_name(d)).c_str());
  std::printf(" %14s\n", "recomputed");
  std::vector<CheckpointPolicy> policies = {
      {CheckpointKind::kNone, 0}, {CheckpointKind::kEvery, 4}, {CheckpointKind::kSqrt, 0}};
  if (p.checkpoint.kind == CheckpointKind::kEvery && p.checkpoint.every != 4)
    policies.insert(policies.begin() + 2, p.checkpoint);
  for (const CheckpointPolicy& pol : policies) {
    std::printf("  %-10s", checkpoint_name(pol).c_str());
    int64_t recomputed = 0;
    for (DType d : dtypes) {
      const CheckpointPlan plan = plan_checkpoints(*layers, pol, d);
      recomputed = plan.recomputations;
      std::printf(" %12s", mib(static_cast<double>(plan.peak_bytes)).c_str());
    }
    std::printf(" %14lld\n", (long long)recomputed);
  }
}

void explain_pool(const Case& c, const PoolGeometry& g) {
  const double es = storage_bytes(c.dtype);
  const double x = element_count(g.x_shape()), y = element_count(g.y_shape());
  std::printf("  x %s  ->  y %s  mode %s, tie %s, ceil_mode %s\n", dims_to_string(g.x_shape()).c_str(),
              dims_to_string(g.y_shape()).c_str(), std::string(pool_mode_name(g.mode)).c_str(),
              std::string(tie_rule_name(g.tie)).c_str(), g.ceil_mode ? "true" : "false");
  print_dims(g.spatial);
  std::printf("  comparisons: %.4g\n", y * static_cast<double>(g.spatial.kernel_count()));
  std::printf("  bytes (%s): forward reads %s, writes %s (+ %s of int64 indices in training)\n",
              std::string(dtype_name(c.dtype)).c_str(), mib(x * es).c_str(), mib(y * es).c_str(), mib(y * 8).c_str());
  std::printf("  training step memory: x, y, indices, dy, dx = %s\n", mib((2 * x + 2 * y) * es + 8 * y).c_str());
}

void explain_avgpool(const Case& c, const AvgPoolGeometry& g) {
  const double es = storage_bytes(c.dtype);
  const double x = element_count(g.x_shape()), y = element_count(g.y_shape());
  const std::string divisor = g.divisor > 0         ? "divisor " + std::to_string(g.divisor)
                              : g.count_include_pad ? "divisor: the window's size, padding counted"
                                                    : "divisor: the input elements the window covers";
  std::printf("  x %s  ->  y %s  ceil_mode %s, %s\n", dims_to_string(g.x_shape()).c_str(),
              dims_to_string(g.y_shape()).c_str(), g.ceil_mode ? "true" : "false", divisor.c_str());
  print_dims(g.spatial);
  std::printf("  additions: %.4g\n", y * static_cast<double>(g.spatial.kernel_count()));
  std::printf("  bytes (%s): forward reads %s, writes %s\n", std::string(dtype_name(c.dtype)).c_str(),
              mib(x * es).c_str(), mib(y * es).c_str());
  std::printf("  training step memory: x, y, dy, dx = %s\n", mib((2 * x + 2 * y) * es).c_str());
}

}  // namespace

int explain_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(
        "usage: kcheck explain CASE\n"
        "  what each case in the file asks for, resolved: shapes, padding per dimension, FLOPs, bytes,\n"
        "  memory for a training step, and for a stack the layers, receptive field and erosion.\n"
        "  Exit 0, or 2 when a case is invalid (it is shown with the reason).\n",
        stdout);
    return 0;
  }
  if (args.size() != 1) return usage_error("explain: give exactly one case file");
  int code = 0;
  for (const LoadedCase& lc : load_case_file(args[0])) {
    std::printf("%s:%d\n", terminal_safe(one_line(lc.file)).c_str(), lc.line);
    if (!lc.c.ok()) {
      std::printf("  INVALID: %s\n", terminal_safe(file_on_one_line(lc.c.status().message(), lc.file)).c_str());
      if (lc.unvalidated) {  // a stack: how its extent got to the layer that is refused
        if (const std::vector<StackLayer> layers = stack_layers_up_to_refused(*lc.unvalidated); !layers.empty()) {
          print_stack_params(std::get<StackParams>(lc.unvalidated->op));
          print_layers(layers, "  <- refused");
        }
      }
      code = 2;
      continue;
    }
    const Case& c = *lc.c;
    std::printf("  %s %s, accumulation %s%s%s\n", std::string(op_name(c.op)).c_str(),
                std::string(dtype_name(c.dtype)).c_str(), std::string(dtype_name(accumulation_of(c))).c_str(),
                c.accumulation ? "" : " (default)",
                c.name.empty() ? "" : ("  \"" + terminal_safe(c.name) + "\"").c_str());
    if (is_stack(c)) {
      explain_stack(c);
      std::printf("  reproduce: %s\n", case_to_one_line(c).c_str());
      continue;
    }
    auto geo = op_geometry(c);
    std::visit(Overloaded{[&](const ConvGeometry& g) { explain_conv(c, g); },
                          [&](const PoolGeometry& g) { explain_pool(c, g); },
                          [&](const AvgPoolGeometry& g) { explain_avgpool(c, g); }},
               *geo);
    std::printf("  reproduce: %s\n", case_to_one_line(c).c_str());
  }
  return code;
}

}  // namespace kc::cli
