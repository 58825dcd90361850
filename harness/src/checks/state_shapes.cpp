// The state check across shapes: the case's variants, one field changed each, run on the
// instance that ran the case, then the case again; each compared with a fresh instance's
// result on the same inputs (state_shapes.h). A variant that does not validate or that
// the backend does not support is left out; one bad variant never ends the check.
#include "state_shapes.h"

#include <array>
#include <functional>
#include <memory>
#include <optional>

#include "checks/shape_mutations.h"
#include "common.h"
#include "core/validate.h"
#include "ops/op_module.h"
#include "state_judge.h"

namespace kc::checks {

using rules::Findings;

namespace {

std::string from_to(const std::string& field, const std::string& from, const std::string& to) {
  return field + " " + from + " -> " + to;
}

std::string change_batch(Case& v, int64_t step) {
  const int64_t old = v.input.batch;
  if (old + step < 1) return "";
  v.input.batch += step;
  return from_to("batch", std::to_string(old), std::to_string(v.input.batch));
}

std::string change_extents(Case& v, int64_t step) {
  const Dims old = v.input.spatial;
  for (int64_t& d : v.input.spatial) {
    if (d + step < 1) return "";
    d += step;
  }
  return from_to("extents", dims_to_string(old), dims_to_string(v.input.spatial));
}

}  // namespace

// Channels change by a whole group, so that the groups still divide them.
std::string change_count(const std::string& field, int64_t& count, int64_t groups, int64_t step) {
  const int64_t old = count;
  if (old + step * groups < groups) return "";
  count += step * groups;
  return from_to(field, std::to_string(old), std::to_string(count));
}

// Every stride one step (an empty stride is the op's default: 1 for conv, the kernel for pools).
std::string change_stride(Dims& stride, const Dims& defaults, int64_t step) {
  const Dims old = stride.empty() ? defaults : stride;
  Dims now = old;
  for (int64_t& s : now) {
    if (s + step < 1) return "";
    s += step;
  }
  stride = now;
  return from_to("stride", dims_to_string(old), dims_to_string(now));
}

// No padding becomes 1 on every side; any other padding becomes none (one step only).
std::string change_padding(PadSpec& p, size_t rank, int64_t step) {
  if (step < 0) return "";
  bool none = p.kind == PadKind::kValid;
  if (p.kind == PadKind::kExplicit) {
    none = true;
    for (const auto& pair : p.pairs) none = none && pair[0] == 0 && pair[1] == 0;
  }
  p = PadSpec{PadKind::kExplicit, std::vector<std::array<int64_t, 2>>(rank, {none ? 1 : 0, none ? 1 : 0})};
  return none ? "padding none -> 1" : "padding -> none";
}

void add_conv_mutations(std::vector<ShapeMutation>& m, const ConvParams& p, std::function<ConvParams&(Case&)> conv) {
  const int64_t groups = p.groups;
  const size_t rank = p.kernel.size();
  m.push_back([groups](Case& v, int64_t step) { return change_count("channels", v.input.channels, groups, step); });
  m.push_back([conv, groups](Case& v, int64_t step) {
    return change_count("out channels", conv(v).out_channels, groups, step);
  });
  m.push_back([conv, rank](Case& v, int64_t step) { return change_stride(conv(v).stride, Dims(rank, 1), step); });
  m.push_back([conv, rank](Case& v, int64_t step) { return change_padding(conv(v).padding, rank, step); });
}

namespace {

// The op's mutations, besides the dtype; none for a stack (its layers are its own cases).
std::vector<ShapeMutation> mutations(const Case& c) {
  std::vector<ShapeMutation> m{change_batch, change_extents};
  std::visit([&](const auto& p) { add_shape_mutations(m, p); }, c.op);
  return m;
}

// Whether the variant validates and the backend takes it (an exception from supports()
// leaves it out: the runner reports such a backend on the case itself).
bool usable(const Case& v, Backend& backend) {
  if (!validate(v).ok() || !op_geometry(v).ok()) return false;
  try {
    return backend.supports(v).ok();
  } catch (...) {
    return false;
  }
}

// A new instance of the backend under test, available and taking the case; null (and
// why) otherwise.
std::unique_ptr<Backend> fresh_instance(const CheckContext& ctx, const Case& c, std::string& why) {
  try {
    std::unique_ptr<Backend> b = (*ctx.fresh)();
    if (!b)
      why = "the factory made no backend";
    else if (Status s = b->available(); !s.ok())
      why = "a fresh instance is unavailable: " + s.message();
    else if (Status s = b->supports(c); !s.ok())
      why = "a fresh instance does not take it: " + s.message();
    return why.empty() ? std::move(b) : nullptr;
  } catch (const std::exception& e) {
    why = std::string("a fresh instance threw: ") + e.what();
  } catch (...) {
    why = "a fresh instance threw";
  }
  return nullptr;
}

// One variant as the shared instance ran it.
struct VariantRun {
  const ShapeVariant* v;
  OpGeometry geo;
  OpInputs in;
  OpOutputs shared;                // on the instance that ran the case
  std::optional<OpOutputs> fresh;  // on a fresh instance; none where one could not be made
};

std::string changes_of(const std::vector<VariantRun>& runs) {
  std::string s;
  for (const VariantRun& run : runs) s += (s.empty() ? "" : ", ") + run.v->change;
  return s;
}

}  // namespace

std::vector<ShapeVariant> shape_variants(const Case& c, Backend& backend) {
  Case base = c;
  base.tensors.clear();
  base.expected.clear();
  base.data.zero.clear();
  base.checks.clear();
  std::vector<ShapeVariant> out;
  const std::vector<ShapeMutation> m = mutations(c);
  for (const ShapeMutation& mutate : m) {
    for (int64_t step : {1, -1}) {
      Case v = base;
      std::string change = mutate(v, step);
      if (change.empty() || !usable(v, backend)) continue;
      out.push_back({std::move(change), std::move(v)});
      break;
    }
  }
  if (m.empty()) return out;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (d == c.dtype) continue;
    Case v = base;
    v.dtype = d;
    if (!usable(v, backend)) continue;
    out.push_back({from_to("dtype", std::string(dtype_name(c.dtype)), std::string(dtype_name(d))), std::move(v)});
    break;
  }
  return out;
}

namespace {

// Each variant's shared-instance result against a fresh instance's, and the case again
// against the runner's call.
Findings judge_runs(const CheckContext& ctx, const std::vector<VariantRun>& runs, const OpOutputs& again, bool bwd,
                    bool bitwise, CheckResult& r) {
  Findings f;
  const state::Judge ja(ctx, bitwise, ctx.c, ctx.geo, ctx.in, &ctx.ref, &ctx.abs);
  state::compare_forward(ja, "the case again, after its variants", again, ctx.cand, f, r);
  if (bwd) state::compare_backward(ja, "the case again, after its variants", again, ctx.cand, f, r);
  for (const VariantRun& run : runs) {
    if (!run.fresh) continue;
    const state::Judge j(ctx, bitwise, run.v->c, run.geo, run.in);
    const std::string call = run.v->change + ", after the case";
    state::compare_forward(j, call, run.shared, *run.fresh, f, r);
    if (bwd) state::compare_backward(j, call, run.shared, *run.fresh, f, r);
  }
  return f;
}

}  // namespace

void check_across_shapes(const CheckContext& ctx, bool bitwise, CheckResult& r) {
  if (ctx.fresh == nullptr || !*ctx.fresh) {
    r.message += "; shapes not varied (no factory for fresh instances)";
    return;
  }
  const PoolGeometry* pool = pool_geo(ctx);
  const bool bwd = ctx.cand.ran_backward && ctx.cand.backward.ok() && (!pool || pool->mode == PoolMode::kTraining);
  const Pass pass = bwd ? Pass::kForwardBackward : Pass::kForward;
  const std::vector<ShapeVariant> variants = shape_variants(ctx.c, ctx.backend);
  std::vector<VariantRun> runs;
  for (const ShapeVariant& v : variants) {
    StatusOr<OpGeometry> geo = op_geometry(v.c);
    StatusOr<OpInputs> in = make_inputs(v.c);
    if (!geo.ok() || !in.ok()) continue;
    runs.push_back({&v, *geo, std::move(*in), {}, std::nullopt});
    runs.back().shared = invoke(ctx.backend, v.c, runs.back().geo, runs.back().in, pass);
  }
  if (runs.empty()) {
    r.message += "; no variant of its shape to vary (none valid and supported)";
    return;
  }
  const OpOutputs again = invoke(ctx.backend, ctx.c, ctx.geo, ctx.in, pass);
  std::string unchecked;
  for (VariantRun& run : runs) {
    std::string why;
    const std::unique_ptr<Backend> fresh = fresh_instance(ctx, run.v->c, why);
    if (fresh)
      run.fresh = invoke(*fresh, run.v->c, run.geo, run.in, pass);
    else
      unchecked += "; " + run.v->change + " not compared: " + why;
  }
  Findings f = judge_runs(ctx, runs, again, bwd, bitwise, r);
  if (!f.empty() && bitwise && state::shows_nondeterminism(ctx)) {
    bitwise = false;  // its nondeterminism is the determinism check's finding
    f = judge_runs(ctx, runs, again, bwd, bitwise, r);
  }
  if (f.empty()) {
    r.message += "; then variants (" + changes_of(runs) + ") and the case again on the same instance, each equal " +
                 state::how_compared(bitwise) + " a fresh instance's" + unchecked;
    return;
  }
  r.disposition = Disposition::kFailed;
  r.message = "results depend on a call of another shape: " + f.summary() + " (compared " +
              state::how_compared(bitwise) +
              "; a fresh instance gave the other result): a plan, workspace or cache kept under a key that misses "
              "the changed field, or kept across shapes";
}

}  // namespace kc::checks
