#include "bench/op_cost.h"
#include "kc/overloaded.h"

#include <cmath>

namespace kc::bench {
namespace {

double count(const Dims& shape) { return static_cast<double>(element_count(shape)); }

OpCost conv_cost(const ConvGeometry& g, double es, BenchOp op) {
  const double x = count(g.x_shape()), w = count(g.w_shape()), y = count(g.y_shape());
  const double b = g.bias ? count(g.b_shape()) : 0.0;
  const double macs = static_cast<double>(g.batch) * g.out_channels * g.spatial.out_count() * g.reduction_length();
  switch (op) {
    case BenchOp::kConvForward:
      return {2 * macs, (x + w + b + y) * es};
    case BenchOp::kConvBackwardData:
      return {2 * macs, (y + w + x) * es};
    case BenchOp::kConvBackwardWeight:
      return {2 * macs, (x + y + w) * es};
    case BenchOp::kConvBackwardBias:
      return {y, (y + b) * es};
    case BenchOp::kConvBackward:  // dy, x, w (b) read; dx, dw (db) written
      return {4 * macs + (g.bias ? y : 0.0), (y + x + w + b + x + w + b) * es};
    default:
      return {};
  }
}

OpCost pool_cost(const PoolGeometry& g, double es, BenchOp op) {
  const double x = count(g.x_shape()), y = count(g.y_shape());
  const double taps = static_cast<double>(g.spatial.kernel_count());
  const double index_bytes = taps <= 256 ? 1.0 : 4.0;
  switch (op) {
    case BenchOp::kPoolInference:
      return {y * taps, (x + y) * es};
    case BenchOp::kPoolTraining:
      return {y * taps, (x + y) * es + y * index_bytes};
    case BenchOp::kPoolBackward:  // dy and indices read, every dx written (zeros included)
      return {y, (y + x) * es + y * index_bytes};
    default:
      return {};
  }
}

// A window sum per output (and one division); the backward adds dy / divisor into each
// of the window's elements.
OpCost avgpool_cost(const AvgPoolGeometry& g, double es, BenchOp op) {
  const double x = count(g.x_shape()), y = count(g.y_shape());
  const double taps = static_cast<double>(g.spatial.kernel_count());
  switch (op) {
    case BenchOp::kAvgPoolForward:
      return {y * taps, (x + y) * es};
    case BenchOp::kAvgPoolBackward:
      return {y * taps, (y + x) * es};
    default:
      return {};
  }
}

}  // namespace

OpCost op_cost(const OpGeometry& g, DType dtype, BenchOp op) {
  const double es = storage_bytes(dtype);
  return std::visit(Overloaded{[&](const ConvGeometry& cg) { return conv_cost(cg, es, op); },
                               [&](const PoolGeometry& pg) { return pool_cost(pg, es, op); },
                               [&](const AvgPoolGeometry& ag) { return avgpool_cost(ag, es, op); }},
                    g);
}

double transform_saving(const Numerics& n, int64_t rank) {
  if (n.algorithm != Algorithm::kWinograd || n.transform_m <= 0 || n.transform_r <= 0) return 1.0;
  const double m = n.transform_m, r = n.transform_r;
  return std::pow(m * r / (m + r - 1), static_cast<double>(rank));
}

}  // namespace kc::bench
