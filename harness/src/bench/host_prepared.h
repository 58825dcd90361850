// A prepared op for a backend that prepares none itself (Backend::prepare unimplemented,
// e.g. a plugin written for `kcheck run`): its host calls, with inputs and outputs made
// once. The backward of a conv is then one call (dx, dw and db together): the host
// interface has no split ops. A pool backward's indices come from one training forward
// of the same backend, made in prepare.
#pragma once

#include <memory>

#include "backend/invoke.h"
#include "kc/backend.h"

namespace kc::bench {

// Whether an op's host calls run a bench op: they do, it is not an op of the case, or
// they cannot run it alone (the split backward ops).
enum class HostFit : int { kRuns, kNotOfCase, kNotAlone };

// unimplemented for an op the host calls cannot run alone (the split backward ops).
StatusOr<std::unique_ptr<PreparedOp>> prepare_host_op(Backend& backend, const Case& c, const OpGeometry& g, BenchOp op,
                                                      const OpInputs& in);

// Bytes of a tensor in the case's storage dtype (host tensors are held as f64).
int64_t storage_size(const Tensor& t);

}  // namespace kc::bench
