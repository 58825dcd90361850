// oneDNN max pooling (pooling_v2: dilation as d - 1) for one problem: inference (no
// workspace), training (the workspace decoded into the contract's indices) and backward
// (the indices encoded back into a workspace). oneDNN's output extent is the floor rule,
// so a ceil_mode case widens the right padding until it gives the contract's extent;
// padding is never selected by oneDNN's max, as in the contract.
// Average pooling runs pooling_avg_include_padding (count_include_pad: true) or
// pooling_avg_exclude_padding (false), no workspace; its right padding is the least that
// gives the contract's extent (avgpool_pad_r), and avgpool_contract_gap says where
// oneDNN's divisor is not the contract's.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"
#include "onednn_conv.h"
#include "onednn_memory.h"

namespace kc::onednn {

struct PoolPlan {
  memory::dims x_dims, y_dims;
  dnnl::pooling_v2_forward::primitive_desc fwd;  // forward_training when bwd is set
  std::optional<dnnl::pooling_v2_backward::primitive_desc> bwd;
};

// Throws dnnl::error (status unimplemented) when oneDNN cannot run the problem.
// scratchpad: as make_conv_plan's.
PoolPlan make_pool_plan(const dnnl::engine& engine, const PoolGeometry& g, memory::data_type type, Flavor flavor,
                        bool training, dnnl::scratchpad_mode scratchpad = dnnl::scratchpad_mode::library);

std::string implementations(const PoolPlan& plan);

// The window offsets a forward_training left in its workspace, plain order
// (pool_workspace.h decodes them into the contract's indices).
std::vector<int64_t> read_offsets(Context& ctx, const memory& ws);

// indices null: inference. x's dtype is the case's.
void run_pool_forward(Context& ctx, const PoolPlan& plan, const PoolGeometry& g, const Tensor& x, Tensor& y,
                      IndexTensor* indices);
Status run_pool_backward(Context& ctx, const PoolPlan& plan, const PoolGeometry& g, const Tensor& dy,
                         const IndexTensor& indices, Tensor& dx);

struct AvgPoolPlan {
  memory::dims x_dims, y_dims;
  dnnl::pooling_v2_forward::primitive_desc fwd;  // forward_training: the backward's hint
  dnnl::pooling_v2_backward::primitive_desc bwd;
};

// Per dim, the right padding handed to oneDNN: (out - 1) * stride + kernel - in - pad_lo,
// the least that gives the contract's out (its last window ends at in + pad_r), and 0
// when the windows end before in. It is below the kernel wherever the last window holds
// an input element, as pooling_avg_exclude_padding requires. It exceeds the contract's
// pad_hi only where a ceil_mode window overhangs past in + pad_hi.
memory::dims avgpool_pad_r(const AvgPoolGeometry& g);

// unimplemented, naming the field, where oneDNN's average is not the contract's: a
// divisor (oneDNN has none), or count_include_pad: true with a window overhanging past
// in + pad_hi (oneDNN's include_padding divides by the whole kernel, the contract by
// the window clipped to [-pad_lo, in + pad_hi)). ok otherwise.
Status avgpool_contract_gap(const AvgPoolGeometry& g);

// Throws dnnl::error (status unimplemented) when oneDNN cannot run the problem. Runs
// whatever it is given: the contract gap is the caller's to check.
AvgPoolPlan make_avgpool_plan(const dnnl::engine& engine, const AvgPoolGeometry& g, memory::data_type type,
                              Flavor flavor, dnnl::scratchpad_mode scratchpad = dnnl::scratchpad_mode::library);

std::string implementations(const AvgPoolPlan& plan);

void run_avgpool_forward(Context& ctx, const AvgPoolPlan& plan, const Tensor& x, Tensor& y);
void run_avgpool_backward(Context& ctx, const AvgPoolPlan& plan, const Tensor& dy, Tensor& dx);

}  // namespace kc::onednn
