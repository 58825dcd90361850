// Max and average pooling through oneDNN. The `any` flavors feed the pool in the layout
// oneDNN's own convolution writes (asked of a 1x1 convolution), as in a framework where a
// conv precedes the pool; onednn.plain keeps N C [D] [H] W.
#include "onednn_pool.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pool_workspace.h"

namespace kc::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct PoolWindows {
  memory::dims strides, kernel, dilation, pad_l, pad_r;
};

// pad_r widened so that oneDNN's floor((in + lo + hi - extent) / s) + 1 is the contract's out.
PoolWindows windows(const PoolGeometry& g) {
  PoolWindows w;
  for (const DimGeometry& d : g.spatial.dims) {
    w.strides.push_back(d.stride);
    w.kernel.push_back(d.kernel);
    w.dilation.push_back(d.dilation - 1);
    w.pad_l.push_back(d.pad_lo);
    w.pad_r.push_back(std::max(d.pad_hi, (d.out - 1) * d.stride + d.extent() - d.in - d.pad_lo));
  }
  return w;
}

memory::desc conv_output_layout(const dnnl::engine& engine, const memory::dims& dims, memory::data_type type) {
  memory::dims wd = {dims[1], dims[1]}, ones(dims.size() - 2, 1), zeros(dims.size() - 2, 0);
  wd.insert(wd.end(), ones.begin(), ones.end());
  const memory::desc any(dims, type, memory::format_tag::any);
  const dnnl::convolution_forward::primitive_desc pd({prop_kind::forward_training,
                                                      algorithm::convolution_direct,
                                                      any,
                                                      {wd, type, memory::format_tag::any},
                                                      any,
                                                      ones,
                                                      zeros,
                                                      zeros,
                                                      zeros},
                                                     engine);
  return pd.dst_desc();
}

memory write_offsets(Context& ctx, const std::vector<int64_t>& offsets, const memory::desc& ws) {
  memory plain(plain_desc(ws.dims(), ws.data_type()), ctx.engine);
  if (ws.data_type() == memory::data_type::u8) {
    auto* p = static_cast<uint8_t*>(plain.get_data_handle());
    for (size_t i = 0; i < offsets.size(); ++i) p[i] = static_cast<uint8_t>(offsets[i]);
  } else {
    auto* p = static_cast<int32_t*>(plain.get_data_handle());
    for (size_t i = 0; i < offsets.size(); ++i) p[i] = static_cast<int32_t>(offsets[i]);
  }
  return reordered(ctx, plain, ws);
}

// x and y as the flavor lays them out: plain, or x in a convolution's output layout and
// y in the pool's choice.
std::pair<memory::desc, memory::desc> pool_descs(const dnnl::engine& engine, const memory::dims& x_dims,
                                                 const memory::dims& y_dims, memory::data_type type, Flavor flavor) {
  if (flavor == Flavor::kPlain) return {plain_desc(x_dims, type), plain_desc(y_dims, type)};
  return {conv_output_layout(engine, x_dims, type), memory::desc(y_dims, type, memory::format_tag::any)};
}

void execute(Context& ctx, const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
  p.execute(ctx.stream, args);
  ctx.stream.wait();
}

}  // namespace

std::vector<int64_t> read_offsets(Context& ctx, const memory& ws) {
  const memory plain = to_plain(ctx, ws);
  const memory::desc d = plain.get_desc();
  const size_t n = d.get_size() / memory::data_type_size(d.data_type());
  std::vector<int64_t> out(n);
  if (d.data_type() == memory::data_type::u8) {
    const auto* p = static_cast<const uint8_t*>(plain.get_data_handle());
    for (size_t i = 0; i < n; ++i) out[i] = p[i];
  } else {
    const auto* p = static_cast<const int32_t*>(plain.get_data_handle());
    for (size_t i = 0; i < n; ++i) out[i] = p[i];
  }
  return out;
}

PoolPlan make_pool_plan(const dnnl::engine& engine, const PoolGeometry& g, memory::data_type type, Flavor flavor,
                        bool training, dnnl::scratchpad_mode scratchpad) {
  PoolPlan p;
  p.x_dims = to_dims(g.x_shape());
  p.y_dims = to_dims(g.y_shape());
  const PoolWindows w = windows(g);
  const auto [x, y] = pool_descs(engine, p.x_dims, p.y_dims, type, flavor);
  const prop_kind kind = training ? prop_kind::forward_training : prop_kind::forward_inference;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad);
  p.fwd = {{kind, algorithm::pooling_max, x, y, w.strides, w.kernel, w.dilation, w.pad_l, w.pad_r}, attr, engine};
  if (training) {
    p.bwd.emplace(dnnl::pooling_v2_backward::desc(algorithm::pooling_max, p.fwd.src_desc(), p.fwd.dst_desc(), w.strides,
                                                  w.kernel, w.dilation, w.pad_l, w.pad_r),
                  attr, engine, p.fwd);
  }
  return p;
}

std::string implementations(const PoolPlan& plan) {
  std::string s = std::string("pool fwd ") + plan.fwd.impl_info_str();
  if (plan.bwd) s += std::string(", pool bwd ") + plan.bwd->impl_info_str();
  return s;
}

void run_pool_forward(Context& ctx, const PoolPlan& plan, const PoolGeometry& g, const Tensor& x, Tensor& y,
                      IndexTensor* indices) {
  memory y_m(plan.fwd.dst_desc(), ctx.engine);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, from_tensor(ctx, x, plan.x_dims, plan.fwd.src_desc())},
                                          {DNNL_ARG_DST, y_m}};
  std::optional<memory> ws;
  if (indices != nullptr) {
    ws.emplace(plan.fwd.workspace_desc(), ctx.engine);
    args[DNNL_ARG_WORKSPACE] = *ws;
  }
  execute(ctx, dnnl::pooling_v2_forward(plan.fwd), args);
  to_tensor(ctx, y_m, x.dtype, y);
  if (indices != nullptr) decode_window_offsets(g, read_offsets(ctx, *ws), *indices);
}

Status run_pool_backward(Context& ctx, const PoolPlan& plan, const PoolGeometry& g, const Tensor& dy,
                         const IndexTensor& indices, Tensor& dx) {
  KC_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, encode_window_offsets(g, indices));
  const auto& pd = *plan.bwd;
  memory dx_m(pd.diff_src_desc(), ctx.engine);
  execute(ctx, dnnl::pooling_v2_backward(pd),
          {{DNNL_ARG_DIFF_DST, from_tensor(ctx, dy, plan.y_dims, pd.diff_dst_desc())},
           {DNNL_ARG_WORKSPACE, write_offsets(ctx, offsets, pd.workspace_desc())},
           {DNNL_ARG_DIFF_SRC, dx_m}});
  to_tensor(ctx, dx_m, dy.dtype, dx);
  return ok_status();
}

memory::dims avgpool_pad_r(const AvgPoolGeometry& g) {
  memory::dims pad_r;
  for (const DimGeometry& d : g.spatial.dims)
    pad_r.push_back(std::max<int64_t>(0, (d.out - 1) * d.stride + d.kernel - d.in - d.pad_lo));
  return pad_r;
}

Status avgpool_contract_gap(const AvgPoolGeometry& g) {
  if (g.divisor > 0) {
    return unimplemented(
        "avgpool.divisor: oneDNN's average pooling has no divisor override (it divides by the window's "
        "size, with or without its padding)");
  }
  if (!g.count_include_pad) return ok_status();
  const memory::dims pad_r = avgpool_pad_r(g);
  for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
    const DimGeometry& d = g.spatial.dims[i];
    if (pad_r[i] <= d.pad_hi) continue;
    return unimplemented("avgpool.count_include_pad: true with ceil_mode: dim " + std::to_string(i) +
                         ": the last window ends " + std::to_string(pad_r[i] - d.pad_hi) +
                         " past in + pad_hi; oneDNN's pooling_avg_include_padding divides by the whole kernel, "
                         "overhang included, where the contract counts only the window within [-pad_lo, in + "
                         "pad_hi)");
  }
  return ok_status();
}

AvgPoolPlan make_avgpool_plan(const dnnl::engine& engine, const AvgPoolGeometry& g, memory::data_type type,
                              Flavor flavor, dnnl::scratchpad_mode scratchpad) {
  memory::dims strides, kernel, dilation, pad_l;
  for (const DimGeometry& d : g.spatial.dims) {
    strides.push_back(d.stride);
    kernel.push_back(d.kernel);
    dilation.push_back(0);
    pad_l.push_back(d.pad_lo);
  }
  const memory::dims pad_r = avgpool_pad_r(g);
  const algorithm alg =
      g.count_include_pad ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
  const memory::dims x_dims = to_dims(g.x_shape()), y_dims = to_dims(g.y_shape());
  const auto [x, y] = pool_descs(engine, x_dims, y_dims, type, flavor);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad);
  const dnnl::pooling_v2_forward::primitive_desc fwd(
      {prop_kind::forward_training, alg, x, y, strides, kernel, dilation, pad_l, pad_r}, attr, engine);
  const dnnl::pooling_v2_backward::primitive_desc bwd(
      dnnl::pooling_v2_backward::desc(alg, fwd.src_desc(), fwd.dst_desc(), strides, kernel, dilation, pad_l, pad_r),
      attr, engine, fwd);
  return AvgPoolPlan{x_dims, y_dims, fwd, bwd};
}

std::string implementations(const AvgPoolPlan& plan) {
  return std::string("avgpool fwd ") + plan.fwd.impl_info_str() + ", avgpool bwd " + plan.bwd.impl_info_str();
}

void run_avgpool_forward(Context& ctx, const AvgPoolPlan& plan, const Tensor& x, Tensor& y) {
  memory y_m(plan.fwd.dst_desc(), ctx.engine);
  execute(ctx, dnnl::pooling_v2_forward(plan.fwd),
          {{DNNL_ARG_SRC, from_tensor(ctx, x, plan.x_dims, plan.fwd.src_desc())}, {DNNL_ARG_DST, y_m}});
  to_tensor(ctx, y_m, x.dtype, y);
}

void run_avgpool_backward(Context& ctx, const AvgPoolPlan& plan, const Tensor& dy, Tensor& dx) {
  memory dx_m(plan.bwd.diff_src_desc(), ctx.engine);
  execute(
      ctx, dnnl::pooling_v2_backward(plan.bwd),
      {{DNNL_ARG_DIFF_DST, from_tensor(ctx, dy, plan.y_dims, plan.bwd.diff_dst_desc())}, {DNNL_ARG_DIFF_SRC, dx_m}});
  to_tensor(ctx, dx_m, dy.dtype, dx);
}

}  // namespace kc::onednn
