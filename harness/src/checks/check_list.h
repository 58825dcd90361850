// The code of every check: for check NAME (a row of core/check_table.h), NAME_run()
// runs it and, where only the data or the backend decide whether it applies,
// NAME_not_applicable() says why not (empty: it applies). check_registry.cpp binds them to
// the table's rows. The files: checks/NAME.cpp, and stack/NAME.cpp for the stack checks.
#pragma once

#include <string>

#include "checks/checks.h"

namespace kc::checks {

#define KC_DECLARE_CHECK(NAME) CheckResult NAME##_run(const CheckContext& ctx);
#define KC_DECLARE_SCOPED_CHECK(NAME)                         \
  std::string NAME##_not_applicable(const CheckContext& ctx); \
  CheckResult NAME##_run(const CheckContext& ctx);

KC_DECLARE_CHECK(shape)
KC_DECLARE_CHECK(forward)
KC_DECLARE_SCOPED_CHECK(backward)
KC_DECLARE_SCOPED_CHECK(gradcheck)
KC_DECLARE_SCOPED_CHECK(adjoint)
KC_DECLARE_SCOPED_CHECK(weight_share)
KC_DECLARE_CHECK(argmax)
KC_DECLARE_SCOPED_CHECK(padding)
KC_DECLARE_CHECK(determinism)
KC_DECLARE_CHECK(integrity)
KC_DECLARE_CHECK(golden)
KC_DECLARE_CHECK(state)
KC_DECLARE_CHECK(checkpoint)  // stack/checkpoint.cpp
KC_DECLARE_CHECK(influence)   // stack/influence.cpp
KC_DECLARE_CHECK(drift)       // stack/drift.cpp

// Stack halves of checks that apply to single ops too (stack/basic.cpp).
CheckResult stack_shape_run(const CheckContext& ctx);
CheckResult stack_backward_run(const CheckContext& ctx);
std::string stack_backward_not_applicable(const CheckContext& ctx);
// The first gradient in which two runs of the candidate on the stack differ by more than
// twice backward's allowance for sums in another order ("" when none does): the noise
// of a backend that sums in any order (deterministic: false), told from a wrong result.
// Meaningful where backward judges (stack_backward_not_applicable says ""): not in
// f16/bf16, whose allowance grows with depth past any gradient's size.
std::string stack_runs_apart(const CheckContext& ctx, const StackRun& a, const StackRun& b);
// For f16/bf16 runs whose dx is bitwise equal (so both routed the gradient alike): the
// first dw or db apart by more than twice the accumulation's order allowance plus one
// rounding to the storage dtype in each run ("" when none is).
std::string stack_weight_grads_apart(const CheckContext& ctx, const StackRun& a, const StackRun& b);

#undef KC_DECLARE_CHECK
#undef KC_DECLARE_SCOPED_CHECK

}  // namespace kc::checks
