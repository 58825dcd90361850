// The conv module's kcheck explain: shapes, groups and padding mode, the window per dim,
// FLOPs of the three passes, bytes and a training step's memory.
#include <cstdio>
#include <string>

#include "cli/explain_text.h"
#include "ops/op_module.h"

namespace kc::cli {

namespace {

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

}  // namespace

void explain(const Case& c, const ConvParams&) { explain_conv(c, unchecked_conv_geometry(c)); }
void explain_refused(const Case&, const ConvParams&) {}

}  // namespace kc::cli
