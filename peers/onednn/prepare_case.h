// Backend::prepare of the oneDNN peers: a case's op to the convolution or max-pool
// prepared op (prepared_conv.h, prepared_pool.h), after checking that the inputs the op
// reads have the case's shapes. Call after supports(c) accepted the case.
#pragma once

#include <memory>

#include "kc/case.h"
#include "kc/prepared_op.h"
#include "onednn_conv.h"

namespace kc::onednn {

StatusOr<std::unique_ptr<PreparedOp>> prepare_case(const Case& c, Flavor flavor, BenchOp op, const OpInputs& in);

}  // namespace kc::onednn
