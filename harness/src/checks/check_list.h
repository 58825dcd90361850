// Declarations of every check (one file each in this folder): for check NAME,
// NAME_not_applicable() says why it does not apply (empty: it applies) and NAME_run()
// runs it. The order of the registry (registry.cpp) is the order of reports.
#pragma once

#include <string>

#include "kc/checks.h"

namespace kc::checks {

#define KC_DECLARE_CHECK(NAME)                                \
  std::string NAME##_not_applicable(const CheckContext& ctx); \
  CheckResult NAME##_run(const CheckContext& ctx);

KC_DECLARE_CHECK(shape)
KC_DECLARE_CHECK(forward)
KC_DECLARE_CHECK(backward)
KC_DECLARE_CHECK(gradcheck)
KC_DECLARE_CHECK(adjoint)
KC_DECLARE_CHECK(weight_share)
KC_DECLARE_CHECK(argmax)
KC_DECLARE_CHECK(padding)
KC_DECLARE_CHECK(determinism)
KC_DECLARE_CHECK(integrity)
KC_DECLARE_CHECK(golden)
KC_DECLARE_CHECK(checkpoint)  // stack_checkpoint.cpp
KC_DECLARE_CHECK(influence)   // stack_influence.cpp
KC_DECLARE_CHECK(drift)       // stack_drift.cpp

// Stack halves of checks that apply to single ops too (stack_shape.cpp, stack_backward.cpp).
CheckResult stack_shape_run(const CheckContext& ctx);
CheckResult stack_backward_run(const CheckContext& ctx);
std::string stack_backward_not_applicable(const CheckContext& ctx);
// The first gradient in which two runs of the candidate on the stack differ by more than
// twice backward's allowance for sums in another order ("" when none does): the noise
// of a backend that sums in any order (deterministic: false), told from a wrong result.
// Meaningful where backward judges (stack_backward_not_applicable says ""): not in
// f16/bf16, whose allowance grows with depth past any gradient's size.
std::string stack_runs_apart(const CheckContext& ctx, const StackRun& a, const StackRun& b);

#undef KC_DECLARE_CHECK

}  // namespace kc::checks
