// `kcheck bench` on one case and backend (docs/bench.md): every op the case has,
// prepared by the backend (or through its host calls), timed warm and or cold, its
// timed outputs re-checked against the oracle. Runs inside a worker process: a backend
// that crashes ends the worker, not the run.
#pragma once

#include <string>
#include <vector>

#include "bench/entry.h"
#include "bench/timing.h"
#include "kc/backend.h"

namespace kc::bench {

// One timed op of a case: which call, its label in the tables, and whether it is
// timed as deterministic (the atomic dw is the one that is not).
struct OpPlan {
  BenchOp op;
  std::string label;
  bool deterministic = true;
};

struct BenchOptions {
  TimingBudget budget;
  bool warm = true, cold = false;
  int64_t rotation_cap_bytes = int64_t{1} << 30;  // most bytes of instances rotated for cold
  int64_t rotation_cap_instances = 64;            // and most instances
};

// One entry per op and mode; an op that failed is an entry with `error` set. A backend
// that does not support the case gives a single entry with the reason.
std::vector<BenchEntry> bench_case(Backend& backend, const Case& c, const std::string& file,
                                   const BenchOptions& options);
// The same on several backends, in order, the oracle computed once for them all.
std::vector<BenchEntry> bench_case_on(const std::vector<Backend*>& backends, const Case& c, const std::string& file,
                                      const BenchOptions& options);

// The dtype the backend's arithmetic runs in for a case: the reference computes in f64;
// others in the case's dtype (f16 and bf16 storage: their own, as a GEMM in that dtype
// does; the ceiling then takes the faster of it and f32).
DType compute_dtype(const Backend& backend, const Case& c);

}  // namespace kc::bench
