// The convolution ops of `kcheck bench` on oneDNN (kc/prepared_op.h): conv_forward (the
// fused relu post-op for conv_bias_relu), conv_backward_data, conv_backward_weight (with
// db: oneDNN computes them in one primitive) and conv_backward (as the host call: with
// relu, z recomputed and routed through oneDNN's relu backward inside the run). The split
// backward ops of a conv_bias_relu case start from dz = relu'(z) dy made once in prepare.
// conv_backward_bias alone is unimplemented: oneDNN has no db-only convolution primitive.
#pragma once

#include <memory>

#include "kc/prepared_op.h"
#include "kc/shape.h"
#include "onednn_conv.h"

namespace kc::onednn {

// May throw dnnl::error (the backend guards it). in: the case's inputs, shapes checked.
StatusOr<std::unique_ptr<PreparedOp>> prepare_conv(const ConvGeometry& g, DType dtype, bool relu, Flavor flavor,
                                                   BenchOp op, const OpInputs& in);

}  // namespace kc::onednn
