// A stack case's training step timed under each checkpoint policy (none, every:K with
// the case's K or 2, sqrt): the seeds' sublinear-memory trade measured, activation
// memory saved against recomputation time. The re-check is the claim itself: every
// policy gives the gradients of the run without checkpointing, bitwise (a backend whose
// two plain runs differ is mistrusted instead); the values are `kcheck run`'s to judge.
#pragma once

#include <string>
#include <vector>

#include "bench/case_bench.h"

namespace kc::bench {

std::vector<BenchEntry> bench_stack(Backend& backend, const Case& c, const std::string& file,
                                    const BenchOptions& options);

}  // namespace kc::bench
