// kcheck explain CASE: what a case asks for, resolved: shapes, padding per dim, FLOPs,
// bytes moved, memory for a training step, receptive field and border erosion.
#include <cstdio>
#include <string>

#include "cli.h"
#include "kc/case_io.h"
#include "kc/invoke.h"

namespace kc::cli {
namespace {

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

void print_dims(const SpatialGeometry& g) {
  std::printf("  %-4s %6s %6s %6s %6s %9s %6s %9s %8s\n", "dim", "in", "kernel", "stride", "dilat", "pad lo/hi",
              "out", "receptive", "erosion");
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
  const double macs = static_cast<double>(g.batch) * g.out_channels * g.spatial.out_count() * g.reduction_length();
  std::printf("  x %s  w %s%s  ->  y %s\n", dims_to_string(g.x_shape()).c_str(), dims_to_string(g.w_shape()).c_str(),
              g.bias ? (" b " + dims_to_string(g.b_shape())).c_str() : "", dims_to_string(g.y_shape()).c_str());
  std::printf("  groups %lld (Cin/G %lld, Cout/G %lld), padding mode %s\n", (long long)g.groups,
              (long long)g.in_per_group(), (long long)g.out_per_group(), std::string(padding_mode_name(g.mode)).c_str());
  print_dims(g.spatial);
  std::printf("  FLOPs: forward %.4g, backward data %.4g, backward weight %.4g\n", 2 * macs, 2 * macs, 2 * macs);
  std::printf("  bytes (%s): forward reads %s, writes %s\n", std::string(dtype_name(c.dtype)).c_str(),
              mib((x + w) * es).c_str(), mib(y * es).c_str());
  std::printf("  training step memory: x, w, y, dy, dx, dw = %s\n", mib((2 * x + 2 * w + 2 * y) * es).c_str());
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

}  // namespace

int explain_command(const Args& args) {
  if (args.size() != 1) return usage_error("explain: give exactly one case file");
  int code = 0;
  for (const LoadedCase& lc : load_case_file(args[0])) {
    std::printf("%s:%d\n", lc.file.c_str(), lc.line);
    if (!lc.c.ok()) {
      std::printf("  INVALID: %s\n", lc.c.status().message().c_str());
      code = 2;
      continue;
    }
    const Case& c = *lc.c;
    std::printf("  %s %s%s\n", std::string(op_name(c.op)).c_str(), std::string(dtype_name(c.dtype)).c_str(),
                c.name.empty() ? "" : ("  \"" + c.name + "\"").c_str());
    auto geo = op_geometry(c);
    if (const auto* g = std::get_if<ConvGeometry>(&*geo)) explain_conv(c, *g);
    else explain_pool(c, std::get<PoolGeometry>(*geo));
    std::printf("  reproduce: %s\n", case_to_one_line(c).c_str());
  }
  return code;
}

}  // namespace kc::cli
