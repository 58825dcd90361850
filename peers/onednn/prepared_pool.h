// The max-pool ops of `kcheck bench` on oneDNN (kc/prepared_op.h): pool_inference
// (forward_inference, no workspace), pool_training (forward_training; its workspace
// decoded into the contract's indices by outputs()) and pool_backward (routed by the
// workspace of a training forward run once in prepare, whose indices outputs() reports);
// and the average-pool ops: avgpool_forward (y) and avgpool_backward (dx, no workspace).
#pragma once

#include <memory>

#include "kc/prepared_op.h"
#include "kc/shape.h"
#include "onednn_conv.h"

namespace kc::onednn {

// May throw dnnl::error (the backend guards it). in: the case's inputs, shapes checked.
StatusOr<std::unique_ptr<PreparedOp>> prepare_pool(const PoolGeometry& g, DType dtype, Flavor flavor, BenchOp op,
                                                   const OpInputs& in);

// The contract gap (avgpool_contract_gap) is the caller's to check.
StatusOr<std::unique_ptr<PreparedOp>> prepare_avgpool(const AvgPoolGeometry& g, DType dtype, Flavor flavor, BenchOp op,
                                                      const OpInputs& in);

}  // namespace kc::onednn
