// The dispatch of prepare() and its input checks; oneDNN's exceptions stop here.
#include "prepare_case.h"

#include <string>

#include "onednn_status.h"
#include "onednn_supports.h"
#include "prepared_conv.h"
#include "prepared_pool.h"

namespace kc::onednn {
namespace {

Status shaped(const char* name, const Tensor& t, const Dims& want) {
  if (t.shape == want && t.size() == element_count(want)) return ok_status();
  return invalid_argument(std::string("prepare: input ") + name + " is " + dims_to_string(t.shape) + ", the case has " +
                          dims_to_string(want));
}

bool reads_dy(BenchOp op) {
  return op == BenchOp::kConvBackward || op == BenchOp::kConvBackwardData || op == BenchOp::kConvBackwardWeight ||
         op == BenchOp::kConvBackwardBias || op == BenchOp::kPoolBackward || op == BenchOp::kAvgPoolBackward;
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_conv_case(const Case& c, Flavor flavor, BenchOp op, const OpInputs& in) {
  KC_ASSIGN_OR_RETURN(const ConvGeometry g, conv_geometry(c));
  KC_RETURN_IF_ERROR(shaped("x", in.x, g.x_shape()));
  KC_RETURN_IF_ERROR(shaped("w", in.w, g.w_shape()));
  if (g.bias) KC_RETURN_IF_ERROR(shaped("b", in.b, g.b_shape()));
  if (reads_dy(op)) KC_RETURN_IF_ERROR(shaped("dy", in.dy, g.y_shape()));
  const bool relu = std::holds_alternative<ConvBiasReluParams>(c.op);
  StatusOr<std::unique_ptr<PreparedOp>> out = unimplemented("");
  KC_RETURN_IF_ERROR(guarded("prepare " + std::string(bench_op_name(op)), [&] {
    out = prepare_conv(g, c.dtype, relu, flavor, op, in);
    return out.status();
  }));
  return out;
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_pool_case(const Case& c, Flavor flavor, BenchOp op, const OpInputs& in) {
  KC_ASSIGN_OR_RETURN(const PoolGeometry g, pool_geometry(c));
  KC_RETURN_IF_ERROR(shaped("x", in.x, g.x_shape()));
  if (reads_dy(op)) KC_RETURN_IF_ERROR(shaped("dy", in.dy, g.y_shape()));
  StatusOr<std::unique_ptr<PreparedOp>> out = unimplemented("");
  KC_RETURN_IF_ERROR(guarded("prepare " + std::string(bench_op_name(op)), [&] {
    out = prepare_pool(g, c.dtype, pool_flavor(flavor), op, in);
    return out.status();
  }));
  return out;
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_avgpool_case(const Case& c, Flavor flavor, BenchOp op,
                                                           const OpInputs& in) {
  KC_ASSIGN_OR_RETURN(const AvgPoolGeometry g, avgpool_geometry(c));
  KC_RETURN_IF_ERROR(shaped("x", in.x, g.x_shape()));
  if (reads_dy(op)) KC_RETURN_IF_ERROR(shaped("dy", in.dy, g.y_shape()));
  StatusOr<std::unique_ptr<PreparedOp>> out = unimplemented("");
  KC_RETURN_IF_ERROR(guarded("prepare " + std::string(bench_op_name(op)), [&] {
    out = prepare_avgpool(g, c.dtype, pool_flavor(flavor), op, in);
    return out.status();
  }));
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_case(const Case& c, Flavor flavor, BenchOp op, const OpInputs& in) {
  if (is_stack(c)) return unimplemented("a stack case is timed by its layers' host calls, not prepared by oneDNN");
  if (std::holds_alternative<MaxPoolParams>(c.op)) return prepare_pool_case(c, flavor, op, in);
  if (std::holds_alternative<AvgPoolParams>(c.op)) return prepare_avgpool_case(c, flavor, op, in);
  return prepare_conv_case(c, flavor, op, in);
}

}  // namespace kc::onednn
