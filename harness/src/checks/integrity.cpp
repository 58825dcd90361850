// integrity: the calling contract of backend.h, checked on the backend alone.
//  (a) every output element is written: outputs are poisoned before the call (a NaN
//      with its own payload, kPoisonBits; indices kPoisonIndex, see invoke.cpp), so an
//      element still holding the poison was never written. A NaN the kernel computed
//      (an overflow to inf, then inf - inf) is a wrong value, which forward reports.
//  (b) inputs are unchanged, bitwise.
//  (c) buffers keep their size and their guard bands (host_buffer.h).
// Not run on the oracle (see common.h). What only the end of a case shows (writes after
// return, the floating-point environment) is added by run/late_integrity.h.
// More on the method: docs/notes.md, section harness/src/checks/integrity.cpp.
#include <cmath>

#include "check_list.h"
#include "common.h"
#include "findings.h"
#include "window.h"

namespace kc::checks {

// The rule checks' shared helpers live in their own namespace: inline functions of
// another checks header may share a name (and must not share a definition).
using namespace rules;
namespace {

// Where the poison of one output tensor survived. For y and dx (sg given) the positions
// are also named by slice over the spatial plane, e.g. "rows 0 and 7 (the border)".
void check_written(const std::string& name, const Tensor& got, const Tensor& ref, const SpatialGeometry* sg,
                   bool output_plane, Findings& f) {
  if (got.size() != ref.size()) return;  // (c) reports the size
  PlaneSet set;
  if (sg) {
    const Dims ext = output_plane ? sg->out_dims() : sg->in_dims();
    set = {ext,
           std::vector<char>(static_cast<size_t>(element_count(ext)), 0),
           {},
           output_plane ? output_border(*sg) : input_border(*sg)};
  }
  int64_t n = 0, first = -1;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (!is_poison(got[i])) continue;
    if (n++ == 0) first = i;
    if (sg) set.flagged[static_cast<size_t>(i) % set.flagged.size()] = 1;
  }
  if (n == 0) return;
  // A kernel that adds into its output (dw +=, a scatter of dx) without clearing it first
  // leaves the same NaN: the value cannot tell the two apart, so both are named.
  std::string d = name + ": " + num(n) + " of " + num(got.size()) +
                  " elements never written, or added to (+=) without being cleared first (still the poison NaN), "
                  "first at " +
                  at(first, ref.shape);
  if (sg) {
    bool border = false;
    const std::string where = describe_positions(set, &border);
    d += border ? "; border outputs not written: " + name + " " + where : "; at " + name + " " + where;
  }
  f.add("written-" + name, d);
}

void check_indices_written(const IndexTensor& idx, Findings& f) {
  int64_t n = 0, first = -1;
  for (size_t i = 0; i < idx.data.size(); ++i) {
    if (idx.data[i] != kPoisonIndex) continue;
    if (n++ == 0) first = static_cast<int64_t>(i);
  }
  if (n == 0) return;
  f.add("written-indices", "indices: " + num(n) + " of " + num(idx.size()) +
                               " never written (still the poison value), first at " + at(first, idx.shape));
}

// (a) on the runner's outputs.
void check_all_written(const CheckContext& ctx, Findings& f) {
  const OpOutputs& c = ctx.cand;
  const ConvGeometry* cg = conv_geo(ctx);
  const SpatialGeometry& sg = spatial_of(ctx.geo);
  check_written("y", c.y, ctx.ref.y, &sg, true, f);
  if (c.indices) check_indices_written(*c.indices, f);
  if (!c.ran_backward || !c.backward.ok()) return;
  if (ctx.ref.dx.size() > 0) check_written("dx", c.dx, ctx.ref.dx, &sg, false, f);
  if (cg) check_written("dw", c.dw, ctx.ref.dw, nullptr, false, f);
  if (cg && cg->bias) check_written("db", c.db, ctx.ref.db, nullptr, false, f);
}

void input_diff(const std::string& name, const Tensor& before, const Tensor& after, const std::string& when,
                Findings& f) {
  if (before.shape != after.shape || before.size() != after.size()) {
    f.add("input-" + name, "input " + name + " was resized or reshaped " + when + ": " + dims_to_string(before.shape) +
                               " (" + num(before.size()) + " elements) became " + dims_to_string(after.shape) + " (" +
                               num(after.size()) + ")");
    return;
  }
  const BitDiff d = bit_diff(before.data, after.data);
  if (d.count == 0) return;
  f.add("input-" + name, "the backend wrote into its input " + name + " " + when + ": " + num(d.count) + " of " +
                             num(before.size()) + " elements changed, first at " + at(d.first, before.shape) + ": " +
                             num(before[d.first]) + " -> " + num(after[d.first]) + " (inputs are const)");
}

void inputs_diff(const OpInputs& before, const OpInputs& after, const std::string& when, Findings& f) {
  input_diff("x", before.x, after.x, when, f);
  input_diff("w", before.w, after.w, when, f);
  input_diff("b", before.b, after.b, when, f);
  input_diff("dy", before.dy, after.dy, when, f);
}

void check_guards(const OpOutputs& c, const OpInputs& in, const std::string& when, Findings& f);

// (b): the runner's inputs against a fresh fill, then a run on a copy of the pristine
// inputs, compared with them afterwards (and (c) on that run's buffers).
void check_inputs_unchanged(const CheckContext& ctx, Findings& f, std::string& notes) {
  auto fresh = make_inputs(ctx.c);
  if (fresh.ok())
    inputs_diff(*fresh, ctx.in, "during the checked run", f);
  else
    notes += "inputs could not be refilled (" + fresh.status().message() + "); ";
  const OpInputs& pristine = fresh.ok() ? *fresh : ctx.in;
  OpInputs copy = pristine;
  const OpOutputs again = invoke(ctx.backend, ctx.c, ctx.geo, copy);
  inputs_diff(pristine, copy, "during a second run on a copy", f);
  check_guards(again, copy, " (in a second run on a copy)", f);
}

void check_size(const std::string& name, const Dims& shape, int64_t size, const Dims& want, Findings& f) {
  if (shape == want && size == element_count(want)) return;
  f.add("size-" + name, name + " has shape " + dims_to_string(shape) + " and " + num(size) +
                            " elements after the call, but was handed over as " + dims_to_string(want) + " (" +
                            num(element_count(want)) +
                            "): a backend writes into the buffer it is given and "
                            "never resizes or reshapes it");
}

// (c) on the runner's outputs: the very Tensor objects the backend was handed.
void check_sizes(const CheckContext& ctx, Findings& f) {
  const OpOutputs& c = ctx.cand;
  const bool backward = c.ran_backward && c.backward.ok();
  check_size("y", c.y.shape, c.y.size(), y_shape_of(ctx.geo), f);
  if (c.indices) check_size("indices", c.indices->shape, c.indices->size(), y_shape_of(ctx.geo), f);
  if (backward) check_size("dx", c.dx.shape, c.dx.size(), x_shape_of(ctx.geo), f);
  if (const ConvGeometry* g = conv_geo(ctx); g && backward) {  // the weights' gradients: conv only
    check_size("dw", c.dw.shape, c.dw.size(), g->w_shape(), f);
    if (g->bias) check_size("db", c.db.shape, c.db.size(), g->b_shape(), f);
  }
}

// (c) on the bands of one buffer the backend was handed, which must still be that buffer
// (`handed`: where it started; null when it was not handed over).
// `when` follows the buffer's name in the message; the rule is the buffer's alone, so a
// finding of both runs is reported once.
template <class T>
void check_guard(const std::string& buffer, const std::string& when, const HostVector<T>& v, const void* handed,
                 Findings& f) {
  const std::string name = buffer + when;
  if (handed != nullptr && static_cast<const void*>(v.data()) != handed) {
    f.add("replaced-" + buffer, name +
                                    ": the backend replaced the buffer it was given with another one (the "
                                    "given buffer's guard bands went unchecked): write into the buffer handed over");
    return;
  }
  const GuardDamage d = guard_damage(v);
  if (!d.intact()) f.add("guard-" + buffer, name + ": " + describe_guard_damage(v, d));
}

// (c) on every buffer of one run; `when` follows the buffer's name (a finding of the
// checked run is reported once, the second run's only when that run alone shows it).
void check_guards(const OpOutputs& c, const OpInputs& in, const std::string& when, Findings& f) {
  check_guard("y", when, c.y.data, c.handed[0], f);
  if (c.indices) check_guard("indices", when, c.indices->data, c.handed[1], f);
  check_guard("dx", when, c.dx.data, c.handed[2], f);
  check_guard("dw", when, c.dw.data, c.handed[3], f);
  check_guard("db", when, c.db.data, c.handed[4], f);
  check_guard("x", when, in.x.data, nullptr, f);
  check_guard("w", when, in.w.data, nullptr, f);
  check_guard("b", when, in.b.data, nullptr, f);
  check_guard("dy", when, in.dy.data, nullptr, f);
}

}  // namespace

CheckResult integrity_run(const CheckContext& ctx) {
  CheckResult r = make_result("integrity", Disposition::kPassed);
  Findings f;
  std::string notes;
  check_sizes(ctx, f);
  check_guards(ctx.cand, ctx.in, "", f);
  check_all_written(ctx, f);
  check_inputs_unchanged(ctx, f, notes);
  const std::string tail = notes.empty() ? "" : "; " + notes.substr(0, notes.size() - 2);
  if (!f.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = f.summary() + tail;
    return r;
  }
  r.message =
      "every output element written; inputs unchanged (bitwise); every buffer keeps its size and "
      "its guard bands" +
      tail;
  return r;
}

}  // namespace kc::checks
