// The average pool module's kcheck explain: shapes, ceil mode and the divisor rule, the
// window per dim, additions, bytes and a training step's memory.
#include <cstdio>
#include <string>

#include "cli/explain_text.h"
#include "ops/op_module.h"

namespace kc::cli {

void explain(const Case& c, const AvgPoolParams&) {
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
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

void explain_refused(const Case&, const AvgPoolParams&) {}

}  // namespace kc::cli
