// check_case / check_loaded: inputs, the oracle, the backend, then each check.
#include "kc/runner.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>

#include "backend/candidate_call.h"
#include "backend/invoke.h"
#include "checks/checks.h"
#include "checks/common.h"
#include "core/check_table.h"
#include "core/fill.h"
#include "judge/absolute_pass.h"
#include "run/late_integrity.h"
#include "stack/stack_exec.h"

namespace kc {
namespace {

std::vector<std::string>& skipped_list() {
  static std::vector<std::string> names;
  return names;
}

bool requested(const Case& c, std::string_view name) {
  return c.checks.empty() || std::find(c.checks.begin(), c.checks.end(), name) != c.checks.end();
}

bool left_out(std::string_view name) {
  const std::vector<std::string>& skipped = skipped_list();
  return std::find(skipped.begin(), skipped.end(), name) != skipped.end();
}

// Why `def` does not run here, or empty: the oracle rule (a single op on the reference
// is compared with nothing), the table's rules from the case alone, then what only the
// data or the backend decide (the check's own not_applicable).
std::string why_not(const CheckDef& def, const CheckContext& ctx) {
  if (!def.info.on_oracle && ctx.is_reference && ctx.stack == nullptr) return oracle_self_reason();
  if (std::string why = check_never_applies(ctx.c, def.name()); !why.empty()) return why;
  return def.not_applicable ? def.not_applicable(ctx) : std::string();
}

// The candidate calls a single-op check needs: a failed one is its FAILED, an
// unimplemented one its SKIPPED (checks/common.h: call_failed). Empty when they succeeded.
std::optional<CheckResult> failed_call(const CheckDef& def, const CheckContext& ctx) {
  if (ctx.stack != nullptr) return std::nullopt;
  if ((def.info.needs & kNeedsForward) && !ctx.cand.forward.ok()) {
    return checks::call_failed(def.name(), "forward", ctx.cand.forward);
  }
  if ((def.info.needs & kNeedsBackward) == kNeedsBackward && !ctx.cand.backward.ok()) {
    return checks::call_failed(def.name(), "backward", ctx.cand.backward);
  }
  return std::nullopt;
}

// A check that failed or mistrusted while the backend wrote into its inputs (in the
// runner's run or in the check's own) says that first, and fails: what it compared were
// runs on different data, so the cause it found may be none.
void name_input_writes(const CheckContext& ctx, CheckResult& r) {
  if (r.disposition != Disposition::kFailed && r.disposition != Disposition::kMistrusted) return;
  const std::string wrote = checks::input_writes(ctx);
  if (wrote.empty() || r.message.find("wrote into its input") != std::string::npos) return;
  r.disposition = Disposition::kFailed;
  r.message = wrote + "; " + r.message;
}

void run_checks(const CheckContext& ctx, CaseResult& r) {
  for (const CheckDef& def : check_registry()) {
    if (!requested(ctx.c, def.name())) continue;
    if (left_out(def.name())) {  // named where the case names it, as a check that does not apply is
      if (!ctx.c.checks.empty())
        r.checks.push_back(make_result(def.name(), Disposition::kSkipped, "left out by --skip-checks"));
      continue;
    }
    if (const std::string why = why_not(def, ctx); !why.empty()) {
      if (!ctx.c.checks.empty()) r.checks.push_back(make_result(def.name(), Disposition::kSkipped, why));
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    try {
      std::optional<CheckResult> failed = failed_call(def, ctx);
      InputWriteWatch watch;
      r.checks.push_back(failed ? *failed : def.run(ctx));
      name_input_writes(ctx, r.checks.back());
    } catch (const std::exception& e) {
      r.checks.push_back(
          make_result(def.name(), Disposition::kCrashed, cut_text(std::string("exception: ") + e.what())));
    }
    r.checks.back().seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

// The case's disposition from its checks. A case whose every requested check was
// skipped carries their reasons, so that the summary and the reports say why.
void finish(CaseResult& r) {
  r.disposition = Disposition::kSkipped;
  roll_up(r);
  if (r.checks.empty()) {
    r.message = "no requested check applies to this case";
    return;
  }
  if (r.disposition != Disposition::kSkipped || !r.message.empty()) return;
  for (const CheckResult& c : r.checks) r.message += (r.message.empty() ? "" : "; ") + c.name + ": " + c.message;
}

// available() and supports() are the backend's code too: an exception from them is this
// case's CRASHED (check_case), named with the call that threw.
template <class Call>
Status asked(const Backend& backend, const char* what, Call&& call) {
  try {
    return candidate_call(backend, what, call);
  } catch (const std::exception& e) {
    throw std::runtime_error(cut_text(std::string("its ") + what + " threw: " + e.what()));
  } catch (...) {
    throw std::runtime_error(std::string("its ") + what + " threw an exception of a non-standard type");
  }
}

// A case whose op the backend turned down after supports() accepted it: SKIPPED with
// that reason.
CaseResult not_implemented(const Backend& backend, const char* what, const Status& s, CaseResult r) {
  r.disposition = Disposition::kSkipped;
  r.message = backend.name() + " does not implement this case: its " + what + " returned " + s.to_string() +
              " after supports() accepted it";
  return r;
}

// op: stack: the per-layer ops through the executor (stack_exec.h), the oracle in f64
// without checkpointing, the backend in the case dtype under the case's policy.
CaseResult check_stack(const Case& c, Backend& backend, CaseResult r) {
  FpLeakWatch leaks;
  auto layers = stack_layers(c);
  auto in = layers.ok() ? make_stack_inputs(c, *layers) : StatusOr<StackInputs>(layers.status());
  if (!in.ok()) {
    r.disposition = Disposition::kInvalid;
    r.message = in.status().message();
    return r;
  }
  if (Status s = asked(backend, "supports()", [&] { return stack_supports(backend, *layers); }); !s.ok()) {
    r.disposition = Disposition::kSkipped;
    r.message = backend.name() + " does not support this case: " + s.message();
    return r;
  }
  auto oracle = make_reference_backend();
  StackRunOptions keep{CheckpointPolicy{}, DType::kF64, true, true};
  keep.keep_conv_grads = true;
  const StackRun ref = run_stack(*oracle, *layers, *in, keep);
  const StackRun cand = run_stack(backend, *layers, *in, {std::get<StackParams>(c.op).checkpoint, c.dtype, true, true});
  if (checks::unsupported(cand.status)) return not_implemented(backend, "the stack", cand.status, std::move(r));
  // The oracle in the case dtype: on the oracle itself that is `cand` (its checkpointed
  // gradients are bitwise those without), in f64 it is `ref`.
  const bool is_reference = backend.name() == "reference";
  const bool lower = c.dtype != DType::kF64 && !is_reference;
  const StackRun lowered =
      lower ? run_stack(*oracle, *layers, *in, {CheckpointPolicy{}, c.dtype, true, true}) : StackRun{};
  const StackContext sctx{*layers, *in, ref, cand, lower ? lowered : c.dtype == DType::kF64 ? ref : cand};
  const OpGeometry geo = layers->front().conv;
  const OpInputs none_in;
  const OpOutputs none_out;
  const CheckContext ctx{c, geo, none_in, backend, is_reference, none_out, none_out, none_out, &sctx};
  run_checks(ctx, r);
  fail_integrity(leaks.seen(), r);
  finish(r);
  return r;
}

CaseResult check_valid(const Case& c, Backend& backend, const Registry::Factory* fresh, checks::OracleMemo* memo,
                       CaseResult r) {
  FpLeakWatch leaks;  // what the candidate's calls, available() and supports() too, left of the environment
  if (Status s = asked(backend, "available()", [&] { return backend.available(); }); !s.ok()) {
    r.disposition = Disposition::kSkipped;
    r.message = backend.name() + ": unavailable (" + s.message() + ")";
    return r;
  }
  if (is_stack(c)) return check_stack(c, backend, std::move(r));
  if (Status s = asked(backend, "supports()", [&] { return backend.supports(c); }); !s.ok()) {
    r.disposition = Disposition::kSkipped;
    r.message = backend.name() + " does not support this case: " + s.message();
    return r;
  }
  auto geo = op_geometry(c);
  auto in = geo.ok() ? make_inputs(c) : StatusOr<OpInputs>(geo.status());
  if (!in.ok()) {
    r.disposition = Disposition::kInvalid;
    r.message = in.status().message();
    return r;
  }
  checks::OracleRun oracle = checks::oracle_run(memo, c, *geo, *in);
  const OpOutputs ref = std::move(oracle.ref);
  const OpOutputs abs = absolute_pass_for(backend, *geo, std::move(oracle.abs));
  const bool is_reference = backend.name() == "reference";
  const OpOutputs cand = is_reference ? ref : invoke(backend, c, *geo, *in);
  // supports() accepted the case but the backend does not implement the op after all:
  // nothing can be checked, whatever check would run first (never a shape-only pass).
  if (checks::unsupported(cand.forward)) return not_implemented(backend, "forward", cand.forward, std::move(r));
  const NonfinitePasses passes = nonfinite_passes(c, *geo, *in, ref);
  CheckContext ctx{c, *geo, *in, backend, is_reference, ref, abs, cand, nullptr, fresh, memo};
  with_nonfinite_passes(ctx, passes);
  GuardWatch guards;  // the checks' own runs; the integrity check judges the runner's call
  run_checks(ctx, r);
  std::vector<std::string> late = changed_after_return(cand);
  late.insert(late.end(), leaks.seen().begin(), leaks.seen().end());
  for (const std::string& b : guards.seen()) late.push_back("in a check's own run, " + b);
  fail_integrity(late, r);
  finish(r);
  return r;
}

}  // namespace

void set_skipped_checks(std::vector<std::string> names) { skipped_list() = std::move(names); }
const std::vector<std::string>& skipped_checks() { return skipped_list(); }

std::string case_label(const Case& c) { return c.name.empty() ? c.source : c.name; }

static std::vector<std::pair<std::string, std::string>> case_fields(const Case& c) {
  std::string input = "[" + std::to_string(c.input.batch) + ", " + std::to_string(c.input.channels);
  for (int64_t d : c.input.spatial) input += ", " + std::to_string(d);
  return {{"op", std::string(op_name(c.op))}, {"dtype", std::string(dtype_name(c.dtype))}, {"input", input + "]"}};
}

CaseResult result_label(const LoadedCase& loaded, const std::string& backend) {
  CaseResult r;
  r.source = source_of(loaded);
  r.case_name = loaded.c.ok() ? case_label(*loaded.c) : r.source;
  r.backend = backend;
  if (loaded.c.ok()) r.reproducer = case_to_one_line(*loaded.c);
  if (loaded.c.ok()) r.fields = case_fields(*loaded.c);
  return r;
}

CaseResult check_case(const Case& c, Backend& backend, const Registry::Factory* fresh, checks::OracleMemo* memo) {
  const auto start = std::chrono::steady_clock::now();
  CaseResult r;
  r.case_name = case_label(c);
  r.source = c.source;
  r.backend = backend.name();
  r.reproducer = case_to_one_line(c);
  r.fields = case_fields(c);
  const CaseResult label = r;  // an exception leaves the result half made: start from the label
  try {
    r = check_valid(c, backend, fresh, memo, CaseResult(label));
  } catch (const std::exception& e) {
    r = label;
    r.disposition = Disposition::kCrashed;
    r.message = cut_text(std::string("exception: ") + e.what());
  } catch (...) {
    r = label;
    r.disposition = Disposition::kCrashed;
    r.message = "exception of a non-standard type";
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

CaseResult check_loaded_on(const LoadedCase& loaded, const Registry& registry, const std::string& backend,
                           checks::OracleMemo* memo) {
  std::unique_ptr<Backend> b;
  std::string why;
  try {
    b = registry.make(backend);
    pin_judge_fp_env();  // the factory is the backend's code too
    if (!b) why = "no backend named '" + backend + "'";
  } catch (const std::exception& e) {
    why = cut_text(std::string("its factory threw: ") + e.what());
  } catch (...) {
    why = "its factory threw a non-standard exception";
  }
  if (b) return check_loaded(loaded, *b, registry.factory(backend), memo);
  CaseResult r = result_label(loaded, backend);
  r.disposition = Disposition::kCrashed;
  r.message = "backend " + backend + ": " + why;
  return r;
}

namespace {

// The message without its "file:line: " prefix, so that `expect: {error: ...}` matches
// the reason only (a refusal for another reason on the same line must not pass).
std::string_view reason_of(std::string_view msg, const std::string& file) {
  if (msg.substr(0, file.size() + 1) != file + ":") return msg;
  size_t i = file.size() + 1;
  while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9') ++i;
  return msg.substr(i, 2) == ": " ? msg.substr(i + 2) : msg;
}

}  // namespace

CaseResult check_loaded(const LoadedCase& loaded, Backend& backend, const Registry::Factory* fresh,
                        checks::OracleMemo* memo) {
  if (loaded.c.ok() && loaded.expect.pass) return check_case(*loaded.c, backend, fresh, memo);
  CaseResult r = result_label(loaded, backend.name());
  if (loaded.c.ok()) {  // must be refused, but was accepted
    r.disposition = Disposition::kFailed;
    r.message = "expected to be refused with an error containing \"" + loaded.expect.error + "\", but it is valid";
    return r;
  }
  const std::string msg = loaded.c.status().message();
  if (!loaded.expect.pass && !loaded.expect.error.empty() &&
      reason_of(msg, loaded.file).find(loaded.expect.error) != std::string::npos) {
    r.disposition = Disposition::kPassed;
    r.message = "refused as expected: " + msg;
  } else if (!loaded.expect.pass) {
    r.disposition = Disposition::kFailed;
    r.message = "refused, but not with \"" + loaded.expect.error + "\": " + msg;
  } else {
    r.disposition = Disposition::kInvalid;
    r.message = msg;
  }
  return r;
}

}  // namespace kc
