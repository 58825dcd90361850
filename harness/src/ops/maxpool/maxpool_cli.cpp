// The max pool module's kcheck explain: shapes, mode, tie rule, the window per dim,
// comparisons, bytes (the indices of training included) and a training step's memory.
#include <cstdio>
#include <string>

#include "cli/explain_text.h"
#include "ops/op_module.h"

namespace kc::cli {

void explain(const Case& c, const MaxPoolParams&) {
  const PoolGeometry g = unchecked_pool_geometry(c);
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

void explain_refused(const Case&, const MaxPoolParams&) {}

}  // namespace kc::cli
