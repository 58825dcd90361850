// The run-wide figures of `kcheck bench` (docs/bench.md, "Counters"), set once every
// entry and ceiling is in: each entry's fraction of its device's roofline and its ratio
// to the peer of the same case, op and mode; then the targets of the performance issue,
// each a ratio within this run.
#pragma once

#include <string>
#include <vector>

#include "bench/entry.h"
#include "kc/prepared_op.h"

namespace kc::bench {

// The peer an entry is compared with: "onednn" on the CPU, "cudnn" on a GPU; empty for
// the peer itself. The reference is compared with the GEMM of its f64 arithmetic.
std::string peer_of(const BenchEntry& e);

void judge_entries(std::vector<BenchEntry>& entries, const std::vector<Ceiling>& ceilings);

struct TargetResult {
  std::string key, what, goal, detail;
  double value = 0.0;
  bool met = false;
};

// The targets whose entries this run has (none when it has none of them).
std::vector<TargetResult> judge_targets(const std::vector<BenchEntry>& entries, const std::vector<Ceiling>& ceilings);

// The GPU tuning targets of the cuda kernels (gpu_targets.cpp), appended to `out`.
void gpu_targets(const std::vector<BenchEntry>& entries, const std::vector<Ceiling>& ceilings,
                 std::vector<TargetResult>& out);

// The best ceiling of a device by name prefix and dtype (nullptr: none measured).
const Ceiling* best_ceiling(const std::vector<Ceiling>& ceilings, const std::string& device, bool flops,
                            std::optional<DType> dtype, const std::string& name_prefix = "");

}  // namespace kc::bench
