// oneDNN convolution for one problem: the primitive descriptors of its forward (with and
// without the fused relu), backward data, backward weights (and bias) and relu backward,
// and their execution on kc tensors. Creating a plan is where oneDNN decides whether it
// can run the problem (and which implementation does): it throws dnnl::error with
// status unimplemented when it cannot. Dilation is passed as oneDNN counts it (d - 1).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>

#include "kc/shape.h"
#include "kc/tensor.h"
#include "onednn_memory.h"

namespace kc::onednn {

// How a backend asks oneDNN for its primitives.
enum class Flavor {
  kAny,       // memory format `any`, algorithm direct: oneDNN picks layouts and kernels
  kPlain,     // plain layouts, algorithm direct
  kWinograd,  // memory format `any`, algorithm winograd
};

struct ConvPlan {
  memory::dims x_dims, w_dims, b_dims, y_dims;                        // w: [G, Cout/G, Cin/G, k...] when grouped
  dnnl::convolution_forward::primitive_desc fwd;                      // z = conv(x, w) + b; the hint of the backward
  std::optional<dnnl::convolution_forward::primitive_desc> fwd_relu;  // relu(z) as a post-op
  dnnl::convolution_backward_data::primitive_desc bwd_data;
  dnnl::convolution_backward_weights::primitive_desc bwd_weights;
  std::optional<dnnl::eltwise_backward::primitive_desc> relu_bwd;  // dz = relu'(z) dy, on z's layout
};

// scratchpad user: every primitive takes its scratchpad as an argument (a prepared op
// holds it, so that it is counted and allocated once); library: oneDNN keeps it.
ConvPlan make_conv_plan(const dnnl::engine& engine, const ConvGeometry& g, memory::data_type type, Flavor flavor,
                        bool relu, dnnl::scratchpad_mode scratchpad = dnnl::scratchpad_mode::library);

// "fwd jit_wino_4x3:avx512_core, bwd_d ..., bwd_w ...": the implementations that run.
std::string implementations(const ConvPlan& plan);

// y = [relu](conv(x, w) + b); b may be null.
void run_conv_forward(Context& ctx, const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y);
// dx, dw and (db non-null) db of dy, routed through relu'(z) when relu.
void run_conv_backward(Context& ctx, const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db);

}  // namespace kc::onednn
