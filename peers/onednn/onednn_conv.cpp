// oneDNN convolution plans and their execution. Inputs are reordered into the layouts
// the primitives chose and outputs back to plain; the bias is always plain ([Cout]).
// With relu the backward recomputes z = conv(x, w) + b and lets oneDNN's own eltwise
// relu backward (src = z) form dz, so that its NaN convention is oneDNN's.
#include "onednn_conv.h"

#include <unordered_map>

namespace kc::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct Windows {
  memory::dims strides, dilates, pad_l, pad_r;
};

Windows windows(const ConvGeometry& g) {
  Windows w;
  for (const DimGeometry& d : g.spatial.dims) {
    w.strides.push_back(d.stride);
    w.dilates.push_back(d.dilation - 1);  // oneDNN counts dilation from 0
    w.pad_l.push_back(d.pad_lo);
    w.pad_r.push_back(d.pad_hi);
  }
  return w;
}

memory::dims weight_dims(const ConvGeometry& g) {
  memory::dims d;
  if (g.groups > 1) d.push_back(g.groups);
  d.push_back(g.out_per_group());
  d.push_back(g.in_per_group());
  for (int64_t k : g.spatial.kernel_dims()) d.push_back(k);
  return d;
}

memory::desc layout(const memory::dims& dims, memory::data_type type, Flavor flavor) {
  if (flavor == Flavor::kPlain) return plain_desc(dims, type);
  return {dims, type, memory::format_tag::any};
}

std::string impl_of(const dnnl::primitive_desc_base& pd) { return pd.impl_info_str(); }

void execute(Context& ctx, const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
  p.execute(ctx.stream, args);
  ctx.stream.wait();
}

// z (or relu(z) with the fused post-op) in the forward's destination layout.
memory forward(Context& ctx, const dnnl::convolution_forward::primitive_desc& pd, const ConvPlan& plan, const Tensor& x,
               const Tensor& w, const Tensor* b) {
  memory y(pd.dst_desc(), ctx.engine);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, from_tensor(ctx, x, plan.x_dims, pd.src_desc())},
                                          {DNNL_ARG_WEIGHTS, from_tensor(ctx, w, plan.w_dims, pd.weights_desc())},
                                          {DNNL_ARG_DST, y}};
  if (b != nullptr) args[DNNL_ARG_BIAS] = from_tensor(ctx, *b, plan.b_dims, pd.bias_desc());
  execute(ctx, dnnl::convolution_forward(pd), args);
  return y;
}

// dy as the backward primitives read it: dz = relu'(z) dy (z recomputed) with relu.
memory gradient_of_z(Context& ctx, const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                     const Tensor& dy) {
  if (!relu) return from_tensor(ctx, dy, plan.y_dims, plan.bwd_data.diff_dst_desc());
  const memory z = forward(ctx, plan.fwd, plan, x, w, b);
  const auto& pd = *plan.relu_bwd;
  memory dz(pd.diff_src_desc(), ctx.engine);
  execute(ctx, dnnl::eltwise_backward(pd),
          {{DNNL_ARG_SRC, z},
           {DNNL_ARG_DIFF_DST, from_tensor(ctx, dy, plan.y_dims, pd.diff_dst_desc())},
           {DNNL_ARG_DIFF_SRC, dz}});
  return dz;
}

}  // namespace

ConvPlan make_conv_plan(const dnnl::engine& engine, const ConvGeometry& g, memory::data_type type, Flavor flavor,
                        bool relu, dnnl::scratchpad_mode scratchpad) {
  ConvPlan p;
  p.x_dims = to_dims(g.x_shape());
  p.w_dims = weight_dims(g);
  p.b_dims = to_dims(g.b_shape());
  p.y_dims = to_dims(g.y_shape());
  const Windows win = windows(g);
  const algorithm alg = flavor == Flavor::kWinograd ? algorithm::convolution_winograd : algorithm::convolution_direct;
  const memory::desc x = layout(p.x_dims, type, flavor), w = layout(p.w_dims, type, flavor);
  const memory::desc y = layout(p.y_dims, type, flavor), b = plain_desc(p.b_dims, type);
  auto fwd_desc = [&] {
    if (!g.bias)
      return dnnl::convolution_forward::desc(prop_kind::forward_training, alg, x, w, y, win.strides, win.dilates,
                                             win.pad_l, win.pad_r);
    return dnnl::convolution_forward::desc(prop_kind::forward_training, alg, x, w, b, y, win.strides, win.dilates,
                                           win.pad_l, win.pad_r);
  };
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad);
  p.fwd = {fwd_desc(), attr, engine};
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr relu_attr;  // a copy of attr would share its handle (and post-ops)
    relu_attr.set_scratchpad_mode(scratchpad);
    relu_attr.set_post_ops(ops);
    p.fwd_relu.emplace(fwd_desc(), relu_attr, engine);
    const memory::desc z = p.fwd.dst_desc();
    const dnnl::eltwise_forward::primitive_desc hint({prop_kind::forward_training, algorithm::eltwise_relu, z, 0.0f},
                                                     engine);
    p.relu_bwd.emplace(dnnl::eltwise_backward::desc(algorithm::eltwise_relu, z, z, 0.0f), attr, engine, hint);
  }
  p.bwd_data = {{alg, x, w, y, win.strides, win.dilates, win.pad_l, win.pad_r}, attr, engine, p.fwd};
  if (g.bias) {
    p.bwd_weights = {{alg, x, w, b, y, win.strides, win.dilates, win.pad_l, win.pad_r}, attr, engine, p.fwd};
  } else {
    p.bwd_weights = {{alg, x, w, y, win.strides, win.dilates, win.pad_l, win.pad_r}, attr, engine, p.fwd};
  }
  return p;
}

std::string implementations(const ConvPlan& plan) {
  std::string s =
      "fwd " + impl_of(plan.fwd) + ", bwd_d " + impl_of(plan.bwd_data) + ", bwd_w " + impl_of(plan.bwd_weights);
  if (plan.fwd_relu) s += ", fwd+relu " + impl_of(*plan.fwd_relu);
  return s;
}

void run_conv_forward(Context& ctx, const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) {
  const memory out = forward(ctx, relu ? *plan.fwd_relu : plan.fwd, plan, x, w, b);
  to_tensor(ctx, out, x.dtype, y);
}

void run_conv_backward(Context& ctx, const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) {
  const memory dz = gradient_of_z(ctx, plan, x, w, b, relu, dy);
  const auto& bd = plan.bwd_data;
  memory dx_m(bd.diff_src_desc(), ctx.engine);
  execute(ctx, dnnl::convolution_backward_data(bd),
          {{DNNL_ARG_DIFF_DST, reordered(ctx, dz, bd.diff_dst_desc())},
           {DNNL_ARG_WEIGHTS, from_tensor(ctx, w, plan.w_dims, bd.weights_desc())},
           {DNNL_ARG_DIFF_SRC, dx_m}});
  const auto& bw = plan.bwd_weights;
  memory dw_m(bw.diff_weights_desc(), ctx.engine);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, from_tensor(ctx, x, plan.x_dims, bw.src_desc())},
                                          {DNNL_ARG_DIFF_DST, reordered(ctx, dz, bw.diff_dst_desc())},
                                          {DNNL_ARG_DIFF_WEIGHTS, dw_m}};
  std::optional<memory> db_m;
  if (db != nullptr) {
    db_m.emplace(bw.diff_bias_desc(), ctx.engine);
    args[DNNL_ARG_DIFF_BIAS] = *db_m;
  }
  execute(ctx, dnnl::convolution_backward_weights(bw), args);
  to_tensor(ctx, dx_m, x.dtype, dx);
  to_tensor(ctx, dw_m, x.dtype, dw);
  if (db != nullptr) to_tensor(ctx, *db_m, x.dtype, *db);
}

}  // namespace kc::onednn
