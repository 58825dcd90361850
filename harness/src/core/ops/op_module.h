// What each op's module in kc_core (core/ops/<op>.cpp) defines for its params type: its
// geometry (kc/shape.h declares those), its traits, its input tensors' shapes, its cost,
// its validation and which checks never apply to it. Callers dispatch with std::visit and
// a generic lambda over these overloads, so that an op without one fails to compile
// there. The op's name and YAML section are its params' kName and kSection (kc/case.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/dtype.h"
#include "kc/prepared_op.h"
#include "kc/shape.h"
#include "kc/status.h"

namespace kc {

// The window of every op, per spatial dim (shape.cpp): stride and dilation as given (or
// ones), padding resolved, output extents by the shape contract.
Dims or_ones(const Dims& d, size_t rank);
SpatialGeometry build_spatial(const Dims& in, const Dims& kernel, const Dims& stride, const Dims& dilation,
                              const PadSpec& pad, bool ceil_mode);

// What one call of an op costs by its definition, for kcheck bench's rates and roofline
// (docs/bench.md, "Counters"): FLOPs (two per multiply-add of the direct conv; one per
// comparison or add of a pool and a bias gradient) and compulsory bytes (each input
// read once, each output written once, in the storage dtype; argmax indices as the
// smallest integer holding a window offset: 1 byte up to 256 taps, else 4). Zero for a
// call the op does not have.
struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;
};
// A tensor's element count as a double, for the costs.
inline double elements(const Dims& shape) { return static_cast<double>(element_count(shape)); }
OpCost op_cost(const ConvGeometry& g, DType dtype, BenchOp op);
OpCost op_cost(const PoolGeometry& g, DType dtype, BenchOp op);
OpCost op_cost(const AvgPoolGeometry& g, DType dtype, BenchOp op);

// What code outside the modules asks of an op, answered by each module so that no site
// names an op to learn it: a new op states each answer, or op_traits(Case) fails to
// compile. A stack's layers answer for themselves (core/ops/stack.h).
struct OpTraits {
  bool relu = false;     // y = relu(z): relu' routes dy, and y is never negative (conv_bias_relu)
  bool indices = false;  // y selects elements of x and training keeps their argmax (max pool)
};
OpTraits op_traits(const ConvParams&);
OpTraits op_traits(const ConvBiasReluParams&);
OpTraits op_traits(const MaxPoolParams&);
OpTraits op_traits(const AvgPoolParams&);
OpTraits op_traits(const StackParams&);
inline OpTraits op_traits(const Case& c) {
  return std::visit([](const auto& p) { return op_traits(p); }, c.op);
}

// The shapes of a single-op case's input tensors, from its geometry (validated or
// not): x, w and b where the op has them (b with a bias), and dy (y's). A stack's inputs
// are made per layer (core/ops/stack.h): it has none here.
struct InputShapes {
  Dims x, dy;
  std::optional<Dims> w, b;
};
InputShapes input_shapes(const Case& c, const ConvParams& p);
InputShapes input_shapes(const Case& c, const ConvBiasReluParams& p);
InputShapes input_shapes(const Case& c, const MaxPoolParams& p);
InputShapes input_shapes(const Case& c, const AvgPoolParams& p);
InputShapes input_shapes(const Case& c, const StackParams& p);
inline InputShapes input_shapes(const Case& c) {
  return std::visit([&](const auto& p) { return input_shapes(c, p); }, c.op);
}

// Why argmax never applies to an op other than max pooling.
inline constexpr std::string_view kArgmaxOnlyMaxPool = "argmax applies to max pooling only";

// The op's rules of validate() (validate.h), after the input's own fields passed.
Status validate_op(const Case& c, const ConvParams& p, const Limits& limits);
Status validate_op(const Case& c, const ConvBiasReluParams& p, const Limits& limits);
Status validate_op(const Case& c, const MaxPoolParams& p, const Limits& limits);
Status validate_op(const Case& c, const AvgPoolParams& p, const Limits& limits);
Status validate_op(const Case& c, const StackParams& p, const Limits& limits);

// Why check `check` (a name in core/check_table.h) never applies to case c of this op,
// from the case alone; empty: it may. The table's own rules (a stack's checks versus a
// single op's, golden without expected tensors) are applied before these.
std::string never_applies(const Case& c, const ConvParams& p, std::string_view check);
std::string never_applies(const Case& c, const ConvBiasReluParams& p, std::string_view check);
std::string never_applies(const Case& c, const MaxPoolParams& p, std::string_view check);
std::string never_applies(const Case& c, const AvgPoolParams& p, std::string_view check);
std::string never_applies(const Case& c, const StackParams& p, std::string_view check);

}  // namespace kc
