// The cost of a bench op, by the module of the case's op; the saving of a transform.
#include "bench/op_cost.h"

#include <cmath>

namespace kc::bench {

OpCost op_cost(const OpGeometry& g, DType dtype, BenchOp op) {
  // Each op's module (ops/<op>/<op>_core.cpp) has its op_cost overload.
  return std::visit([&](const auto& og) { return kc::op_cost(og, dtype, op); }, g);
}

double transform_saving(const Numerics& n, int64_t rank) {
  if (n.algorithm != Algorithm::kWinograd || n.transform_m <= 0 || n.transform_r <= 0) return 1.0;
  const double m = n.transform_m, r = n.transform_r;
  return std::pow(m * r / (m + r - 1), static_cast<double>(rank));
}

}  // namespace kc::bench
