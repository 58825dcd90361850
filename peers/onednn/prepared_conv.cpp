// Prepared convolution ops. Inputs are converted and reordered once into the layouts the
// primitives chose; an intermediate (z, dz) the run itself makes is reordered inside the
// run when two primitives want it in different layouts, as the host call does.
#include "prepared_conv.h"

#include <vector>

#include "prepared_primitives.h"

namespace kc::onednn {
namespace {

struct Converted {
  const Tensor* source;
  memory m;
};

struct ConvBuild {
  const ConvPlan& plan;
  const ConvGeometry& g;
  DType dtype;
  const OpInputs& in;
  PreparedBuilder* b;
  std::vector<Converted> inputs = {};  // each input in each layout asked, converted once
};

// t (one of c.in) as dims in the layout want, converted here once per layout.
memory input(ConvBuild& c, const Tensor& t, const memory::dims& dims, const memory::desc& want) {
  for (const Converted& k : c.inputs) {
    if (k.source == &t && k.m.get_desc() == want) return k.m;
  }
  c.inputs.push_back({&t, c.b->hold(from_tensor(c.b->context(), t, dims, want))});
  return c.inputs.back().m;
}

memory dy_in(ConvBuild& c, const memory::desc& want) { return input(c, c.in.dy, c.plan.y_dims, want); }

// m in the layout want: m itself, or a copy reordered inside the run.
memory in_layout(PreparedBuilder& b, const memory& m, const memory::desc& want) {
  if (m.get_desc() == want) return m;
  const memory out = b.make(want);
  b.add_reorder(m, out);
  return out;
}

memory add_forward(ConvBuild& c, const dnnl::convolution_forward::primitive_desc& pd, const std::string& label) {
  const memory y = c.b->make(pd.dst_desc());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, input(c, c.in.x, c.plan.x_dims, pd.src_desc())},
                                          {DNNL_ARG_WEIGHTS, input(c, c.in.w, c.plan.w_dims, pd.weights_desc())},
                                          {DNNL_ARG_DST, y}};
  if (c.g.bias) args[DNNL_ARG_BIAS] = input(c, c.in.b, c.plan.b_dims, pd.bias_desc());
  c.b->add(label, pd, dnnl::convolution_forward(pd), std::move(args));
  return y;
}

// dz = relu'(z) dy in the run, z = conv(x, w) + b recomputed first (relu cases only).
memory add_relu_routing(ConvBuild& c) {
  const memory z = add_forward(c, c.plan.fwd, "fwd");
  const auto& pd = *c.plan.relu_bwd;
  const memory dz = c.b->make(pd.diff_src_desc());
  c.b->add("relu_bwd", pd, dnnl::eltwise_backward(pd),
           {{DNNL_ARG_SRC, z}, {DNNL_ARG_DIFF_DST, dy_in(c, pd.diff_dst_desc())}, {DNNL_ARG_DIFF_SRC, dz}});
  return dz;
}

// The gradient a split backward op starts from, in want's layout: dy, or (relu) dz made
// here once by running the routing on its own.
StatusOr<memory> split_gradient(ConvBuild& c, bool relu, const memory::desc& want) {
  if (!relu) return dy_in(c, want);
  PreparedBuilder pre(c.b->context());
  ConvBuild pc{c.plan, c.g, c.dtype, c.in, &pre};
  const memory dz = in_layout(pre, add_relu_routing(pc), want);
  KC_RETURN_IF_ERROR(pre.build(nullptr)->run());
  return c.b->hold(dz);
}

memory add_backward_data(ConvBuild& c, const memory& dz) {
  const auto& pd = c.plan.bwd_data;
  const memory dx = c.b->make(pd.diff_src_desc());
  c.b->add("bwd_d", pd, dnnl::convolution_backward_data(pd),
           {{DNNL_ARG_DIFF_DST, dz},
            {DNNL_ARG_WEIGHTS, input(c, c.in.w, c.plan.w_dims, pd.weights_desc())},
            {DNNL_ARG_DIFF_SRC, dx}});
  return dx;
}

struct WeightGrads {
  memory dw;
  std::optional<memory> db;
};

WeightGrads add_backward_weights(ConvBuild& c, const memory& dz) {
  const auto& pd = c.plan.bwd_weights;
  WeightGrads out{c.b->make(pd.diff_weights_desc()), std::nullopt};
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, input(c, c.in.x, c.plan.x_dims, pd.src_desc())},
                                          {DNNL_ARG_DIFF_DST, dz},
                                          {DNNL_ARG_DIFF_WEIGHTS, out.dw}};
  if (c.g.bias) args[DNNL_ARG_DIFF_BIAS] = *(out.db = c.b->make(pd.diff_bias_desc()));
  c.b->add("bwd_w", pd, dnnl::convolution_backward_weights(pd), std::move(args));
  return out;
}

Tensor read(Context& ctx, const memory& m, DType t, const Dims& shape) {
  Tensor out = Tensor::zeros(t, shape);
  to_tensor(ctx, m, t, out);
  return out;
}

OutputReader reader(const ConvGeometry& g, DType t, std::optional<memory> y, std::optional<memory> dx,
                    std::optional<WeightGrads> dw) {
  return [g, t, y, dx, dw](Context& ctx) {
    PreparedOutputs out;
    if (y) out.y = read(ctx, *y, t, g.y_shape());
    if (dx) out.dx = read(ctx, *dx, t, g.x_shape());
    if (dw) out.dw = read(ctx, dw->dw, t, g.w_shape());
    if (dw && dw->db) out.db = read(ctx, *dw->db, t, g.b_shape());
    return out;
  };
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_conv(const ConvGeometry& g, DType dtype, bool relu, Flavor flavor,
                                                   BenchOp op, const OpInputs& in) {
  PreparedBuilder b{Context{}};
  const ConvPlan plan =
      make_conv_plan(b.context().engine, g, *data_type(dtype), flavor, relu, dnnl::scratchpad_mode::user);
  ConvBuild c{plan, g, dtype, in, &b};
  switch (op) {
    case BenchOp::kConvForward:
      return b.build(reader(g, dtype, add_forward(c, relu ? *plan.fwd_relu : plan.fwd, "fwd"), {}, {}));
    case BenchOp::kConvBackwardData: {
      KC_ASSIGN_OR_RETURN(const memory dz, split_gradient(c, relu, plan.bwd_data.diff_dst_desc()));
      return b.build(reader(g, dtype, {}, add_backward_data(c, dz), {}));
    }
    case BenchOp::kConvBackwardWeight: {
      KC_ASSIGN_OR_RETURN(const memory dz, split_gradient(c, relu, plan.bwd_weights.diff_dst_desc()));
      return b.build(reader(g, dtype, {}, {}, add_backward_weights(c, dz)));
    }
    case BenchOp::kConvBackward: {
      std::optional<memory> dz;
      if (relu) dz = add_relu_routing(c);
      auto gradient = [&](const memory::desc& want) { return dz ? in_layout(b, *dz, want) : dy_in(c, want); };
      const memory dx = add_backward_data(c, gradient(plan.bwd_data.diff_dst_desc()));
      const WeightGrads dw = add_backward_weights(c, gradient(plan.bwd_weights.diff_dst_desc()));
      return b.build(reader(g, dtype, {}, dx, dw));
    }
    case BenchOp::kConvBackwardBias:
      return unimplemented(
          "conv_backward_bias: oneDNN computes db only together with dw (convolution backward weights), which "
          "conv_backward_weight times");
    default:
      break;
  }
  return invalid_argument(std::string(bench_op_name(op)) + " is not an op of a convolution case");
}

}  // namespace kc::onednn
