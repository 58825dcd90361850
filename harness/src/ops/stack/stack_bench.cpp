// The stack module's part of kcheck bench: none here; a stack is timed step by step
// (bench/stack_step.h).
#include "bench/case_bench.h"
#include "ops/op_module.h"

namespace kc::bench {

std::vector<OpPlan> bench_plans(const StackParams&) { return {}; }

}  // namespace kc::bench
