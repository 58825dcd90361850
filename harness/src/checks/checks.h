// The checks of docs/checks.md and what each one is given. The runner computes the
// inputs, the oracle's outputs, the absolute-value pass and the backend's outputs once
// per case x backend; a check may run the backend again (through invoke) on other
// inputs. A check never throws; it returns its disposition with a diagnosis.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/invoke.h"
#include "checks/oracle_memo.h"
#include "core/check_table.h"
#include "core/fill.h"
#include "judge/absolute_pass.h"
#include "judge/tolerance.h"
#include "kc/backend.h"
#include "kc/case.h"
#include "kc/registry.h"
#include "kc/result.h"
#include "ops/stack/stack_layers.h"
#include "ops/stack/stack_runs.h"

namespace kc {

// What the stack checks are given (op: stack); the single-op fields of CheckContext
// then hold the first layer's conv geometry and empty inputs and outputs.
struct StackContext {
  const std::vector<StackLayer>& layers;
  const StackInputs& in;
  const StackRun& ref;      // the oracle in f64 without checkpointing, activations and conv cotangents kept
  const StackRun& cand;     // the backend in the case dtype under the case's policy, activations kept
  const StackRun& lowered;  // the oracle in the case dtype (f64 sums, every layer rounded to it),
                            // activations kept; `ref` itself for an f64 case, `cand` when
                            // the candidate is the oracle
};

struct CheckContext {
  const Case& c;
  const OpGeometry& geo;
  const OpInputs& in;
  Backend& backend;
  bool is_reference;                    // the backend under test is the oracle: it checks itself
  const OpOutputs& ref;                 // the oracle on these inputs (f64)
  const OpOutputs& abs;                 // the oracle on absolute values (for the bound tolerance)
  const OpOutputs& cand;                // the backend on these inputs
  const StackContext* stack = nullptr;  // op: stack only
  // Makes a new instance of the backend under test (the state check compares with one);
  // null where the caller has no factory, and then what needs one is not checked.
  const Registry::Factory* fresh = nullptr;
  // What the oracle computed for this case on another backend in this worker, and where
  // what it computes now is kept (oracle_memo.h); null: nothing is kept.
  checks::OracleMemo* memo = nullptr;
  // The absolute pass over the finite inputs alone (finite_part_pass; `abs` itself where
  // every input is finite). Decides where an accumulator may overflow (tolerance_for);
  // null: only a finite abs element can say so.
  const OpOutputs* finite_abs = nullptr;
  // Where a non-finite input reaches (nonfinite_reach_pass); null where every input is
  // finite, and then inputs_finite says so (null alone: unknown).
  const OpOutputs* nonfinite_reach = nullptr;
  bool inputs_finite = false;
};

// Points the context's finite_abs, nonfinite_reach and inputs_finite at the passes (kept
// alive by the caller), as the runner and bench's recheck both judge a case.
inline void with_nonfinite_passes(CheckContext& ctx, const NonfinitePasses& p) {
  ctx.finite_abs = p.finite_abs ? &*p.finite_abs : &ctx.abs;
  ctx.nonfinite_reach = p.reach ? &*p.reach : nullptr;
  ctx.inputs_finite = !p.reach.has_value();
}

// A check's code, bound by name to its row of the check table (core/check_table.h),
// which says where it applies, whether it runs on the oracle and which candidate calls
// it needs; the runner applies those rules before run() is called.
struct CheckDef {
  const CheckInfo& info;
  // Empty when the check applies to this case and backend, else the reason it does not:
  // what only the data or the backend decide. Null: nothing beyond the table's rules.
  std::string (*not_applicable)(const CheckContext&);
  CheckResult (*run)(const CheckContext&);
  std::string_view name() const { return info.name; }
};

// Every check, in the table's order (the order they run and are reported).
const std::vector<CheckDef>& check_registry();

// The tolerance for one output tensor ("y", "dx", "dw", "db") of the case: its
// reduction length and the case's storage dtype and tolerance kind, and on a candidate
// the case's accumulation dtype (the oracle's own checks keep the default).
ToleranceSpec tolerance_for(const CheckContext& ctx, std::string_view tensor);

// The trust rule: a reason to mistrust a reference tensor a check relies on (all zero,
// constant, or mostly zero), or empty when it can be trusted. A tensor that is sparse
// by construction (a max-pool dx holds dy only at argmax positions) is mistrusted only
// when it is all zero. `source` names where the tensor comes from in the reason.
std::string distrust(std::string_view tensor, const Tensor& ref, bool sparse_by_construction = false,
                     std::string_view source = "reference");

// distrust() of a tensor judged on the elements `counted` marks (all of them when
// `counted` does not match its size).
std::string distrust_counted(std::string_view tensor, const Tensor& ref, std::string_view source,
                             const std::vector<char>& counted);

// The elements of a conv's x that some window reads, directly or as the source of a
// padding copy (reflect, replicate, circular), one flag per element of x: where dx can
// be nonzero at all. A stride that skips inputs, or rows only zero padding reaches past,
// leave the others 0 whatever the data.
std::vector<char> conv_input_read(const ConvGeometry& g);

// distrust() of the op's output `name` (y, dx, dw, db) with what the geometry alone
// makes zero left out: a max pool's dx (one tap a window) is mistrusted only when all
// zero, a conv's dx is judged on the elements some window reads (conv_input_read).
std::string distrust_output(const OpGeometry& geo, std::string_view name, const Tensor& ref,
                            std::string_view source = "reference");

// Why the data cannot tell the right weight-gradient sum from a partial one, or empty:
// a known partial sum (one output position, one sample, all but the last sample, or one
// of two output tiles) whose dw or db, in f64, equals the oracle's (dw, db) exactly,
// because what it leaves out adds up to 0 here: dy elements that are 0 (a relu that
// zeroes a whole sample), products with x = 0, or terms that cancel (integer fills). A
// kernel with that mistake gives the right dw and db on this data. dw counts only where
// the part leaves out an output whose window reads input (the rest adds 0 to dw on any
// data). dz: dy after the relu for conv_bias_relu. weight_share is MISTRUSTED there, and
// the generator's steering redraws the data seed.
std::string partial_sum_blind_spot(const ConvGeometry& g, const Tensor& x, const Tensor& dz, const Tensor& dw,
                                   const Tensor& db);

// A CheckResult with the given name and disposition.
CheckResult make_result(std::string_view name, Disposition d, std::string message = {});

}  // namespace kc
