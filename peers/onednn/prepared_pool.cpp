// Prepared max-pool and average-pool ops. The pool reads x in the layout the plan chose
// (a convolution's output layout for the `any` flavors); the max pool's workspace stays
// in oneDNN's own layout and is decoded only by outputs().
#include "prepared_pool.h"

#include "onednn_pool.h"
#include "pool_workspace.h"
#include "prepared_primitives.h"

namespace kc::onednn {
namespace {

Tensor read(Context& ctx, const memory& m, DType t, const Dims& shape) {
  Tensor out = Tensor::zeros(t, shape);
  to_tensor(ctx, m, t, out);
  return out;
}

IndexTensor indices_of(Context& ctx, const PoolGeometry& g, const memory& ws) {
  IndexTensor out{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(element_count(g.y_shape())))};
  decode_window_offsets(g, read_offsets(ctx, ws), out);
  return out;
}

// y = maxpool(x), with the workspace when ws is set; returns y.
memory add_forward(PreparedBuilder& b, const PoolPlan& plan, const OpInputs& in, const std::optional<memory>& ws) {
  const memory y = b.make(plan.fwd.dst_desc());
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, b.hold(from_tensor(b.context(), in.x, plan.x_dims, plan.fwd.src_desc()))}, {DNNL_ARG_DST, y}};
  if (ws) args[DNNL_ARG_WORKSPACE] = *ws;
  b.add("pool_fwd", plan.fwd, dnnl::pooling_v2_forward(plan.fwd), std::move(args));
  return y;
}

// The training forward run once, in a builder of its own: its workspace routes the
// backward (the run of pool_backward is the backward alone).
StatusOr<memory> workspace_once(PreparedBuilder& b, const PoolPlan& plan, const OpInputs& in) {
  const memory ws = b.workspace(plan.fwd.workspace_desc());
  PreparedBuilder pre(b.context());
  add_forward(pre, plan, in, ws);
  KC_RETURN_IF_ERROR(pre.build(nullptr)->run());
  return ws;
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_pool(const PoolGeometry& g, DType dtype, Flavor flavor, BenchOp op,
                                                   const OpInputs& in) {
  if (op != BenchOp::kPoolInference && op != BenchOp::kPoolTraining && op != BenchOp::kPoolBackward)
    return invalid_argument(std::string(bench_op_name(op)) + " is not an op of a max-pool case");
  PreparedBuilder b{Context{}};
  const bool training = op != BenchOp::kPoolInference;
  const PoolPlan plan =
      make_pool_plan(b.context().engine, g, *data_type(dtype), flavor, training, dnnl::scratchpad_mode::user);
  if (op == BenchOp::kPoolInference) {
    const memory y = add_forward(b, plan, in, std::nullopt);
    return b.build([g, dtype, y](Context& ctx) {
      PreparedOutputs out;
      out.y = read(ctx, y, dtype, g.y_shape());
      return out;
    });
  }
  if (op == BenchOp::kPoolTraining) {
    const memory ws = b.workspace(plan.fwd.workspace_desc());
    const memory y = add_forward(b, plan, in, ws);
    return b.build([g, dtype, y, ws](Context& ctx) {
      PreparedOutputs out;
      out.y = read(ctx, y, dtype, g.y_shape());
      out.indices = indices_of(ctx, g, ws);
      return out;
    });
  }
  KC_ASSIGN_OR_RETURN(const memory ws, workspace_once(b, plan, in));
  const auto& pd = *plan.bwd;
  const memory dx = b.make(pd.diff_src_desc());
  b.add("pool_bwd", pd, dnnl::pooling_v2_backward(pd),
        {{DNNL_ARG_DIFF_DST, b.hold(from_tensor(b.context(), in.dy, plan.y_dims, pd.diff_dst_desc()))},
         {DNNL_ARG_WORKSPACE, ws},
         {DNNL_ARG_DIFF_SRC, dx}});
  return b.build([g, dtype, dx, ws](Context& ctx) {
    PreparedOutputs out;
    out.indices = indices_of(ctx, g, ws);
    out.dx = read(ctx, dx, dtype, g.x_shape());
    return out;
  });
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_avgpool(const AvgPoolGeometry& g, DType dtype, Flavor flavor, BenchOp op,
                                                      const OpInputs& in) {
  if (op != BenchOp::kAvgPoolForward && op != BenchOp::kAvgPoolBackward)
    return invalid_argument(std::string(bench_op_name(op)) + " is not an op of an avgpool case");
  PreparedBuilder b{Context{}};
  const AvgPoolPlan plan =
      make_avgpool_plan(b.context().engine, g, *data_type(dtype), flavor, dnnl::scratchpad_mode::user);
  if (op == BenchOp::kAvgPoolForward) {
    const memory y = b.make(plan.fwd.dst_desc());
    b.add(
        "avgpool_fwd", plan.fwd, dnnl::pooling_v2_forward(plan.fwd),
        {{DNNL_ARG_SRC, b.hold(from_tensor(b.context(), in.x, plan.x_dims, plan.fwd.src_desc()))}, {DNNL_ARG_DST, y}});
    return b.build([g, dtype, y](Context& ctx) {
      PreparedOutputs out;
      out.y = read(ctx, y, dtype, g.y_shape());
      return out;
    });
  }
  const memory dx = b.make(plan.bwd.diff_src_desc());
  b.add("avgpool_bwd", plan.bwd, dnnl::pooling_v2_backward(plan.bwd),
        {{DNNL_ARG_DIFF_DST, b.hold(from_tensor(b.context(), in.dy, plan.y_dims, plan.bwd.diff_dst_desc()))},
         {DNNL_ARG_DIFF_SRC, dx}});
  return b.build([g, dtype, dx](Context& ctx) {
    PreparedOutputs out;
    out.dx = read(ctx, dx, dtype, g.x_shape());
    return out;
  });
}

}  // namespace kc::onednn
