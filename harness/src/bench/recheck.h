// The re-check of a timed op's outputs (docs/bench.md, "Method" 5): what the last timed
// run wrote, judged against the oracle under the same tolerance model and by the same
// code as `kcheck run` (the forward check for y and indices, the backward check for
// gradients). A split backward op writes one tensor: the others are taken from the
// oracle, so that the check judges that one alone.
#pragma once

#include <string>

#include "backend/invoke.h"
#include "kc/prepared_op.h"

namespace kc::bench {

struct Recheck {
  std::string text = "passed";  // "passed", "mistrusted: <why>", "FAILED: <message>"
  bool failed = false;
};

// ref: the oracle's outputs on `in` (invoke() on the reference backend, forward and
// backward); abs: absolute_pass_for(backend, ...) on them, made once per case and
// backend (it costs as much as the oracle).
Recheck recheck_outputs(Backend& backend, const Case& c, const OpGeometry& g, const OpInputs& in, const OpOutputs& ref,
                        const OpOutputs& abs, BenchOp op, const PreparedOutputs& got);

}  // namespace kc::bench
