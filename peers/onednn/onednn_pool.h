// oneDNN max pooling (pooling_v2: dilation as d - 1) for one problem: inference (no
// workspace), training (the workspace decoded into the contract's indices) and backward
// (the indices encoded back into a workspace). oneDNN's output extent is the floor rule,
// so a ceil_mode case widens the right padding until it gives the contract's extent;
// padding is never selected by oneDNN's max, as in the contract.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kc/shape.h"
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

}  // namespace kc::onednn
