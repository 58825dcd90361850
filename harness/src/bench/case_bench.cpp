#include "bench/case_bench.h"

#include <algorithm>
#include <memory>

#include "bench/ceilings.h"
#include "bench/host_prepared.h"
#include "bench/op_cost.h"
#include "bench/recheck.h"
#include "bench/rss.h"
#include "bench/stack_step.h"
#include "core/fill.h"
#include "judge/absolute_pass.h"
#include "ops/op_module.h"

namespace kc::bench {
namespace {

// What one case gives every op: its geometry, inputs, the oracle's outputs, and the
// oracle on absolute values for the tolerance (for the backend being timed).
struct CaseData {
  const Case& c;
  const std::string& file;
  OpGeometry g;
  OpInputs in;
  OpOutputs ref;
  OpOutputs abs;                      // the oracle on absolute values, for direct sums
  const OpOutputs* judged = nullptr;  // what the backend being timed is judged with: abs, or its own
};

// The backend calls timed for a single-op case; a stack is timed step by step
// (stack_step.h), never here.
std::vector<OpPlan> ops_of(const Case& c) {
  return std::visit([](const auto& p) { return bench_plans(p); }, c.op);
}

// BenchEntry::geometry, family, resolution: what the seeds' tables match entries by.
void describe_geometry(const OpGeometry& g, DType dtype, BenchEntry& e) {
  const auto* cg = std::get_if<ConvGeometry>(&g);
  const SpatialGeometry& s = spatial_of(g);
  const Dims x = x_shape_of(g), y = y_shape_of(g);
  const std::string_view kind = std::visit([](const auto& og) { return bench_kind(og); }, g);
  std::string window;
  for (const DimGeometry& d : s.dims)
    window += std::to_string(d.kernel) + "/" + std::to_string(d.stride) + "/" + std::to_string(d.dilation) + "/" +
              std::to_string(d.pad_lo) + "/" + std::to_string(d.pad_hi) + " ";
  std::string head = std::string(kind) + std::string(dtype_name(dtype)) + " N" + std::to_string(x[0]) + " C" +
                     std::to_string(x[1]) + " K" + std::to_string(y[1]);
  if (cg != nullptr) head += " G" + std::to_string(cg->groups) + (cg->bias ? " bias" : "");
  e.resolution.clear();
  for (size_t i = 2; i < x.size(); ++i) e.resolution += (i > 2 ? "x" : "") + std::to_string(x[i]);
  e.family = head + " window " + window;
  e.geometry = e.family + " in " + e.resolution;
  e.spatial_rank = static_cast<int64_t>(x.size()) - 2;
  e.activation_bytes = static_cast<double>(element_count(x) + element_count(y)) * storage_bytes(dtype);
  e.y_bytes = static_cast<double>(element_count(y)) * storage_bytes(dtype);
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_one(Backend& be, const CaseData& d, const OpPlan& p) {
  StatusOr<std::unique_ptr<PreparedOp>> op = be.prepare(d.c, p.op, d.in, {p.deterministic});
  if (op.ok() || op.status().code() != StatusCode::kUnimplemented || !p.deterministic) return op;
  return prepare_host_op(be, d.c, d.g, p.op, d.in);
}

BenchEntry base_entry(const Backend& be, const CaseData& d, const OpPlan& p, const std::string& mode) {
  BenchEntry e;
  e.case_name = d.c.name;
  e.file = d.file;
  e.backend = be.name();
  e.op = p.label;
  e.mode = mode;
  e.dtype = d.c.dtype;
  e.compute = compute_dtype(be, d.c);
  const OpCost cost = op_cost(d.g, d.c.dtype, p.op);
  e.flops = cost.flops;
  e.bytes = cost.bytes;
  describe_geometry(d.g, d.c.dtype, e);
  const Numerics n = be.numerics();
  if (const auto* cg = std::get_if<ConvGeometry>(&d.g); cg && be.name() != "reference" && n.transform()) {
    e.transform_saving = transform_saving(n, static_cast<int64_t>(cg->spatial.dims.size()));
    e.transform_unbounded = n.algorithm != Algorithm::kWinograd;
  }
  return e;
}

// Times `ops` (one: warm; several: cold) into e and re-checks the outputs of the first
// and the last instance (all hold the same inputs; a re-check costs about an op of the
// oracle, too much for every one of 64).
void time_into(Backend& be, const CaseData& d, const OpPlan& p, std::vector<std::unique_ptr<PreparedOp>>& ops,
               const BenchOptions& o, int64_t rss_before, BenchEntry& e) {
  std::vector<PreparedOp*> raw;
  for (auto& op : ops) raw.push_back(op.get());
  StatusOr<Timing> t = time_runs(raw, o.budget);
  if (!t.ok()) {
    e.error = "run: " + t.status().to_string();
    return;
  }
  e.stats = t->stats;
  if (const int64_t peak = peak_rss_bytes(); peak >= 0 && rss_before >= 0) e.rss_peak_bytes = peak - rss_before;
  std::vector<PreparedOp*> checked = {raw.front()};
  if (raw.size() > 1) checked.push_back(raw.back());
  for (PreparedOp* op : checked) {
    StatusOr<PreparedOutputs> out = op->outputs();
    Recheck r = out.ok() ? recheck_outputs(be, d.c, d.g, d.in, d.ref, *d.judged, p.op, *out)
                         : Recheck{"FAILED: outputs: " + out.status().to_string(), true};
    if (r.failed || e.recheck == "passed") e.recheck = r.text;
    e.recheck_failed = e.recheck_failed || r.failed;
  }
}

// Prepares the instances of one mode (warm: one; cold: enough to exceed twice the
// cache, within the caps of bytes and count) and times them.
BenchEntry time_mode(Backend& be, const CaseData& d, const OpPlan& p, std::unique_ptr<PreparedOp> first,
                     const std::string& mode, const BenchOptions& o, int64_t rss_before) {
  BenchEntry e = base_entry(be, d, p, mode);
  const MemoryUse m = first->memory();
  e.held_bytes = m.held_bytes;
  e.workspace_bytes = m.workspace_bytes;
  e.device_peak_bytes = m.device_peak_bytes;
  e.algorithm = first->algorithm();
  e.device = first->device();
  e.cache_bytes = first->cache_bytes() > 0 ? first->cache_bytes() : host_cache_bytes_cached();
  std::vector<std::unique_ptr<PreparedOp>> ops;
  ops.push_back(std::move(first));
  const int64_t each = std::max<int64_t>(1, e.held_bytes + e.workspace_bytes);
  if (mode == "cold" && each <= e.cache_bytes) {
    const int64_t want =
        std::min({2 * e.cache_bytes / each + 1, o.rotation_cap_bytes / each, o.rotation_cap_instances});
    while (static_cast<int64_t>(ops.size()) < want) {
      StatusOr<std::unique_ptr<PreparedOp>> more = prepare_one(be, d, p);
      if (!more.ok()) break;
      ops.push_back(std::move(*more));
    }
  }
  e.instances = static_cast<int64_t>(ops.size());
  time_into(be, d, p, ops, o, rss_before, e);
  return e;
}

// The entries of one op: warm and or cold as asked; one `cold` entry when its data
// exceed the cache (there the two are the same). Nothing for an op the backend does not
// offer (unimplemented).
std::vector<BenchEntry> bench_op(Backend& be, const CaseData& d, const OpPlan& p, const BenchOptions& o,
                                 bool& unimplemented_op) {
  std::vector<BenchEntry> out;
  for (const char* mode : {"warm", "cold"}) {
    if ((std::string(mode) == "warm" && !o.warm) || (std::string(mode) == "cold" && !o.cold)) continue;
    reset_peak_rss();
    const int64_t rss_before = current_rss_bytes();
    StatusOr<std::unique_ptr<PreparedOp>> op = prepare_one(be, d, p);
    if (!op.ok()) {
      if (op.status().code() == StatusCode::kUnimplemented) {
        unimplemented_op = true;
        return out;
      }
      BenchEntry e = base_entry(be, d, p, mode);
      e.error = "prepare: " + op.status().to_string();
      out.push_back(std::move(e));
      return out;
    }
    const int64_t each = (*op)->memory().held_bytes + (*op)->memory().workspace_bytes;
    const int64_t cache = (*op)->cache_bytes() > 0 ? (*op)->cache_bytes() : host_cache_bytes_cached();
    const bool exceeds = each > cache;
    if (exceeds && std::string(mode) == "warm" && o.cold) continue;  // the cold entry says it
    out.push_back(time_mode(be, d, p, std::move(*op), exceeds ? "cold" : mode, o, rss_before));
    if (exceeds) break;
  }
  return out;
}

StatusOr<CaseData> case_data(const Case& c, const std::string& file) {
  KC_ASSIGN_OR_RETURN(OpGeometry g, op_geometry(c));
  KC_ASSIGN_OR_RETURN(OpInputs in, make_inputs(c));
  Case oracle_case = c;  // a pool's oracle in training mode: its indices route every dx
  if (auto* p = std::get_if<MaxPoolParams>(&oracle_case.op)) p->mode = PoolMode::kTraining;
  std::unique_ptr<Backend> ref = make_reference_backend();
  OpOutputs out = invoke(*ref, oracle_case, g, in);
  if (!out.forward.ok()) return out.forward;
  if (!out.backward.ok()) return out.backward;
  OpOutputs abs = absolute_pass(c, g, in, out);
  return CaseData{c, file, std::move(g), std::move(in), std::move(out), std::move(abs)};
}

// The one entry of a case the backend ran nothing of: skipped, or failed.
std::vector<BenchEntry> refused(const Backend& backend, const Case& c, const std::string& file, const std::string& why,
                                bool failed) {
  BenchEntry e;
  e.case_name = c.name;
  e.file = file;
  e.backend = backend.name();
  e.op = "case";
  e.mode = "-";
  e.dtype = c.dtype;
  (failed ? e.error : e.skipped) = why;
  return {e};
}

std::vector<BenchEntry> bench_with(Backend& backend, CaseData& d, const BenchOptions& options) {
  // A transform's rounding spreads over its tiles: its own absolute pass (invoke.h).
  const bool own_abs =
      backend.name() != "reference" && std::holds_alternative<ConvGeometry>(d.g) && backend.numerics().transform();
  const OpOutputs own = own_abs ? absolute_pass_for(backend, d.c, d.g, d.in, d.ref) : OpOutputs{};
  d.judged = own_abs ? &own : &d.abs;
  std::vector<BenchEntry> out;
  bool split_missing = false;
  for (const OpPlan& p : ops_of(d.c)) {
    bool unimpl = false;
    for (BenchEntry& e : bench_op(backend, d, p, options, unimpl)) out.push_back(std::move(e));
    if (unimpl && p.deterministic && p.op != BenchOp::kConvForward) split_missing = true;
  }
  if (split_missing) {  // the host interface's one backward call
    bool unimpl = false;
    for (BenchEntry& e : bench_op(backend, d, {BenchOp::kConvBackward, "conv_backward"}, options, unimpl))
      out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

DType compute_dtype(const Backend& backend, const Case& c) {
  return backend.name() == "reference" ? DType::kF64 : c.dtype;
}

std::vector<BenchEntry> bench_case(Backend& backend, const Case& c, const std::string& file,
                                   const BenchOptions& options) {
  return bench_case_on({&backend}, c, file, options);
}

std::vector<BenchEntry> bench_case_on(const std::vector<Backend*>& backends, const Case& c, const std::string& file,
                                      const BenchOptions& options) {
  std::vector<BenchEntry> out;
  auto add = [&out](std::vector<BenchEntry> v) {
    for (BenchEntry& e : v) out.push_back(std::move(e));
  };
  std::vector<Backend*> willing;
  for (Backend* b : backends) {
    if (Status s = b->supports(c); !s.ok()) {
      add(refused(*b, c, file, s.message(), false));
    } else if (is_stack(c)) {
      add(bench_stack(*b, c, file, options));
    } else {
      willing.push_back(b);
    }
  }
  if (willing.empty()) return out;
  StatusOr<CaseData> d = case_data(c, file);  // once for every backend: it costs the most
  for (Backend* b : willing) {
    if (!d.ok()) {
      add(refused(*b, c, file, "oracle: " + d.status().to_string(), true));  // a valid case: a failure
      continue;
    }
    add(bench_with(*b, *d, options));
  }
  return out;
}

}  // namespace kc::bench
