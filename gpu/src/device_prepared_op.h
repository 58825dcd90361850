// The prepared op of both GPU engines (kc/prepared_op.h): one BenchOp of a case on its
// own engine and stream, inputs uploaded once, outputs poisoned and allocated, one
// untimed warm-up whose guard bands are checked. Each run() queues only the op's
// kernels between two CUDA events on that stream. Internal to kc_gpu; the backends'
// prepare() and PreparedRun (prepared_run.h) are its callers.
#pragma once

#include <memory>

#include "engine.h"
#include "kc/prepared_op.h"

namespace kc::gpu {

// engine: a fresh one, owned by the op (its scratch, library handle and algorithm
// choice belong to this op alone). The case must be supported by it.
StatusOr<std::unique_ptr<PreparedOp>> prepare_device_op(std::unique_ptr<Engine> engine, const Case& c, BenchOp op,
                                                        const OpInputs& in, const PrepareOptions& options);

}  // namespace kc::gpu
