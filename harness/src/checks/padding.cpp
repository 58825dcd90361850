// padding: the padding semantics of docs/ops.md ("Convolution", "Max pooling"), checked on
// the backend alone.
//  (a) equivalence: the op on x equals the same op with `valid` padding on x padded
//      explicitly here (zeros / reflect / replicate / circular for conv, -inf for max
//      pool), built independently of reference/src/pad.cpp. Conv: y, dw and db within
//      twice the tolerance (both sides are the backend's), and dx against the padded
//      run's dx folded back onto the elements each padded position copies (the adjoint
//      of padding). Max pool: y bitwise, and the padded run's indices map back to the
//      same input elements.
//  (b) coverage (padding_coverage.h): every input element in some window receives
//      gradient, and every output is written.
// More on the method: docs/notes.md, section harness/src/checks/padding.cpp.
#include <limits>
#include <optional>

#include "check_list.h"
#include "common.h"
#include "findings.h"
#include "ops/op_module.h"
#include "padding_coverage.h"
#include "padding_run.h"
#include "padding_taps.h"
#include "window.h"

namespace kc::checks {

// The rule checks' shared helpers live in their own namespace: inline functions of
// another checks header may share a name (and must not share a definition).
using namespace rules;
namespace {

// Input coordinate that padded coordinate p copies, or -1 where it holds the fill (zero
// for conv zeros, -inf for a pool; also past the declared padding).
int64_t source_coord(const DimGeometry& d, std::optional<PaddingMode> mode, int64_t p) {
  const int64_t i = p - d.pad_lo;
  if (i >= 0 && i < d.in) return i;
  if (!mode || i < -d.pad_lo || i >= d.in + d.pad_hi) return -1;
  switch (*mode) {
    case PaddingMode::kZeros:
      return -1;
    case PaddingMode::kReplicate:
      return i < 0 ? 0 : d.in - 1;
    case PaddingMode::kReflect:
      return i < 0 ? -i : 2 * (d.in - 1) - i;  // edge not repeated
    case PaddingMode::kCircular:
      return ((i % d.in) + d.in) % d.in;
  }
  return -1;
}

// The in-plane flat input position padded position q copies, or -1 for the fill.
int64_t source_flat(const SpatialGeometry& g, const SourceTable& src, const Dims& ext, int64_t q) {
  const std::vector<int64_t> pc = unravel(q, ext);
  int64_t flat = 0;
  for (size_t a = 0; a < pc.size(); ++a) {
    const int64_t s = src[a][static_cast<size_t>(pc[a])];
    if (s < 0) return -1;
    flat = flat * g.dims[a].in + s;
  }
  return flat;
}

// The fill of padded positions: -inf for a max pool, 0 otherwise; the padding mode of
// conv's copies (none for a pool).
bool max_pool(const CheckContext& ctx) { return pool_geo(ctx) != nullptr; }
std::optional<PaddingMode> copy_mode(const CheckContext& ctx) {
  if (const ConvGeometry* g = conv_geo(ctx)) return g->mode;
  return std::nullopt;
}

// Whether the op on the explicitly padded input is the same op (an average pool whose
// windows would divide by other counts there is not: only coverage is checked).
bool padded_run_judges(const CheckContext& ctx) {
  return std::visit([](const auto& g) { return checks::padded_run_judges(g); }, ctx.geo);
}

// The case on x padded explicitly with the pads of `pads` (the case's own, or another
// hypothesis of them: the windows, strides and outputs stay the case's); without
// `with_input`, the case and geometry only (the padded x is not allocated).
StatusOr<Padded> make_padded(const CheckContext& ctx, const SpatialGeometry& pads, bool with_input = true) {
  const bool pool = max_pool(ctx);
  const SpatialGeometry& sg = pads;
  Padded r{ctx.c, ctx.geo, with_input ? ctx.in : OpInputs{}, {}, {}, ctx.in.x.shape[0] * ctx.in.x.shape[1]};
  const std::optional<PaddingMode> mode = copy_mode(ctx);
  for (const DimGeometry& d : sg.dims) {
    const int64_t ext = (d.out - 1) * d.stride + d.extent();
    std::vector<int64_t> s(static_cast<size_t>(ext));
    for (int64_t p = 0; p < ext; ++p) s[static_cast<size_t>(p)] = source_coord(d, mode, p);
    r.src.push_back(std::move(s));
    r.ext.push_back(ext);
    r.trivial = r.trivial && d.pad_lo == 0 && ext == d.in;
  }
  r.c = with_own_inputs(std::move(r.c));  // the padded input is passed directly; inline data has the old shape
  r.c.input.spatial = r.ext;
  std::visit([](auto& p) { drop_padding(p); }, r.c.op);
  KC_ASSIGN_OR_RETURN(r.geo, op_geometry(r.c));
  const SpatialGeometry& pg = spatial_of(r.geo);
  if (pg.out_dims() != sg.out_dims()) {
    return internal_error("the explicitly padded case has outputs " + dims_to_string(pg.out_dims()) + ", not " +
                          dims_to_string(sg.out_dims()));
  }
  if (!with_input) return r;
  Dims shape{ctx.in.x.shape[0], ctx.in.x.shape[1]};
  shape.insert(shape.end(), r.ext.begin(), r.ext.end());
  r.in.x = Tensor::filled(ctx.in.x.dtype, shape, pool ? -std::numeric_limits<double>::infinity() : 0.0);
  const int64_t in_count = sg.in_count(), pcount = element_count(r.ext);
  for (int64_t q = 0; q < pcount; ++q) {
    const int64_t s = source_flat(sg, r.src, r.ext, q);
    if (s < 0) continue;
    for (int64_t p = 0; p < r.planes; ++p) r.in.x[p * pcount + q] = ctx.in.x[p * in_count + s];
  }
  return r;
}

// The adjoint of the explicit padding: each padded position's gradient is added to the
// input element it copies.
Tensor fold_back(const Padded& pd, const SpatialGeometry& sg, const Tensor& dxp, const Dims& x_shape) {
  Tensor dx = Tensor::zeros(DType::kF64, x_shape);
  const int64_t in_count = sg.in_count(), pcount = element_count(pd.ext);
  for (int64_t q = 0; q < pcount; ++q) {
    const int64_t s = source_flat(sg, pd.src, pd.ext, q);
    if (s < 0) continue;
    for (int64_t p = 0; p < pd.planes; ++p) dx[p * in_count + s] += dxp[p * pcount + q];
  }
  return dx;
}

// Two runs of the backend, each within its bound of the exact result, differ by at most
// twice the bound; |exact| <= abs, so each run's output rounding is bounded by u_out*abs.
double pair_bound(const ToleranceSpec& s, double ref, double abs) {
  const double extra = s.tolerance.kind == ToleranceKind::kBound ? unit_roundoff(s.storage) * abs : 0.0;
  return 2.0 * (element_bound(s, ref, abs) + extra);
}

// Flags the elements where got and base disagree beyond pair_bound (abs null: bitwise,
// NaN meeting NaN); records the worst coordinates into r.
// skipped_taps: the backend declares that it skips zero-padding taps, so where the padded
// run formed NaN * 0 at an explicit zero (a non-finite w or dy there), the run with
// implicit padding rightly did not (forward and backward judge its value).
std::vector<char> disagree(const std::string& name, const Tensor& got, const Tensor& base, const Tensor* abs,
                           const ToleranceSpec& spec, CheckResult& r, int64_t& count, bool skipped_taps = false) {
  std::vector<char> bad(static_cast<size_t>(base.size()), 0);
  count = 0;
  for (int64_t i = 0; i < base.size() && i < got.size(); ++i) {
    // Equal values never disagree, whatever the bound (a NaN bound would say otherwise).
    const bool same = same_bits(got[i], base[i]) || (std::isnan(got[i]) && std::isnan(base[i]));
    // Near the dtype's largest value one run may round to an infinity the other misses by
    // its bound (a fold summed in f64 is 3.6e38 where f32 overflows): both right.
    const bool overflow = abs && (overflow_explains(spec, got[i], base[i], (*abs)[i]) ||
                                  overflow_explains(spec, base[i], got[i], (*abs)[i]));
    const bool ok = same || overflow || (abs && within(got[i], base[i], pair_bound(spec, base[i], (*abs)[i])));
    if (ok || (skipped_taps && std::isnan(base[i]) && !std::isnan(got[i]))) continue;
    bad[static_cast<size_t>(i)] = 1;
    if (++count <= 3)
      r.worst.push_back(
          {name, unravel(i, base.shape), got[i], base[i], abs ? pair_bound(spec, base[i], (*abs)[i]) : 0.0});
    if (std::isfinite(got[i]) && std::isfinite(base[i]))
      r.max_abs_error = std::max(r.max_abs_error, std::abs(got[i] - base[i]));
  }
  return bad;
}

// A candidate conv with zero padding that declares it never forms its padding taps.
bool skips_padding_taps(const CheckContext& ctx) {
  const ConvGeometry* g = conv_geo(ctx);
  return g && g->mode == PaddingMode::kZeros && declares_padding_skip(ctx);
}

std::string mode_rule(const CheckContext& ctx) {
  if (max_pool(ctx)) return "padded positions are -inf and never selected";
  switch (copy_mode(ctx).value_or(PaddingMode::kZeros)) {
    case PaddingMode::kZeros:
      return "padded positions read 0";
    case PaddingMode::kReflect:
      return "reflect mirrors about the edge element without repeating it";
    case PaddingMode::kReplicate:
      return "replicate repeats the edge element";
    case PaddingMode::kCircular:
      return "circular wraps around to the other side";
  }
  return {};
}

std::string padding_words(const CheckContext& ctx, const SpatialGeometry& sg) {
  std::string s = max_pool(ctx) ? "-inf" : std::string(padding_mode_name(copy_mode(ctx).value_or(PaddingMode::kZeros)));
  s += " padding [";
  for (size_t a = 0; a < sg.dims.size(); ++a) {
    s += (a ? ", [" : "[") + num(sg.dims[a].pad_lo) + ", " + num(sg.dims[a].pad_hi) + "]";
  }
  return s + "]";
}

// Pads a kernel is known to get wrong, each as the padding it applies instead:
// every dim's [lo, hi] as [hi, lo] (SAME's odd pad on the low side, SAME_LOWER for
// SAME), and the pads of the last two dims exchanged (an (h, w) API given (w, h)).
struct PadHypothesis {
  std::string name;
  SpatialGeometry pads;
};

std::vector<PadHypothesis> pad_hypotheses(const SpatialGeometry& sg) {
  std::vector<PadHypothesis> out;
  SpatialGeometry sides = sg;
  bool lopsided = false;
  for (DimGeometry& d : sides.dims) {
    lopsided = lopsided || d.pad_lo != d.pad_hi;
    std::swap(d.pad_lo, d.pad_hi);
  }
  if (lopsided) out.push_back({"pads on the wrong side (each dim's [lo, hi] applied as [hi, lo])", sides});
  const size_t r = sg.dims.size();
  if (r >= 2) {
    SpatialGeometry swapped = sg;
    DimGeometry &h = swapped.dims[r - 2], &w = swapped.dims[r - 1];
    if (h.pad_lo != w.pad_lo || h.pad_hi != w.pad_hi) {
      std::swap(h.pad_lo, w.pad_lo);
      std::swap(h.pad_hi, w.pad_hi);
      out.push_back({"H and W padding swapped (the pads of the last two dims exchanged)", swapped});
    }
  }
  return out;
}

// The hypotheses whose padding, run through the oracle, gives the candidate's y within
// the tolerance (both, when the two pads coincide), joined by "or"; empty if none does.
std::string matching_hypothesis(const CheckContext& ctx) {
  auto oracle = make_reference_backend();
  std::string found;
  for (const PadHypothesis& h : pad_hypotheses(spatial_of(ctx.geo))) {
    auto pd = make_padded(ctx, h.pads);
    if (!pd.ok()) continue;
    const OpOutputs run = invoke(*oracle, pd->c, pd->geo, pd->in, Pass::kForward);
    if (!run.forward.ok() || run.y.size() != ctx.cand.y.size()) continue;
    CheckResult scratch;
    int64_t n = 0;
    disagree("y", ctx.cand.y, run.y, max_pool(ctx) ? nullptr : &ctx.abs.y, tolerance_for(ctx, "y"), scratch, n,
             skips_padding_taps(ctx));
    if (n == 0) found += (found.empty() ? "" : ", or ") + h.name + ": " + padding_words(ctx, h.pads);
  }
  return found;
}

// y of the case against y on the padded input; names the outputs that differ and
// whether they are exactly the windows that overlap the padding.
void compare_y(const CheckContext& ctx, const SpatialGeometry& sg, const Tensor& yp, Findings& f, CheckResult& r) {
  int64_t n = 0;
  const std::vector<char> bad = disagree("y", ctx.cand.y, yp, max_pool(ctx) ? nullptr : &ctx.abs.y,
                                         tolerance_for(ctx, "y"), r, n, skips_padding_taps(ctx));
  if (n == 0) return;
  PlaneSet set{sg.out_dims(), std::vector<char>(static_cast<size_t>(sg.out_count()), 0), {}, output_border(sg)};
  bool all_border = true, all_poison = true;
  for (size_t i = 0; i < bad.size(); ++i) {
    if (!bad[i]) continue;
    all_poison = all_poison && is_poison(ctx.cand.y[static_cast<int64_t>(i)]);
    const int64_t o = static_cast<int64_t>(i) % sg.out_count();
    set.flagged[static_cast<size_t>(o)] = 1;
    const std::vector<int64_t> oc = unravel(o, sg.out_dims());
    bool touches = false;
    for (size_t a = 0; a < oc.size(); ++a) touches = touches || touches_padding(sg.dims[a], oc[a]);
    all_border = all_border && touches;
  }
  std::string d = "y differs from the same op on the input padded explicitly (" + padding_words(ctx, sg) +
                  ", then valid) at " + num(n) + " of " + num(yp.size()) + " outputs: " + describe_positions(set);
  if (all_poison)
    d += ", left NaN (the poison) on the original input: never written";
  else if (all_border)
    d += ", all in windows that overlap the padding: " + mode_rule(ctx);
  else
    d += "; not only in windows that overlap the padding";
  if (!all_poison) {
    if (const std::string h = matching_hypothesis(ctx); !h.empty()) d += "; y is the op with " + h;
  }
  f.add("equivalence", d);
}

}  // namespace

// Max pool: the padded run's indices, mapped back to the unpadded plane, select the
// same elements (any holder of the maximum under tie `any`). Windows whose y differs,
// or is -inf or selects a -inf (an all -inf window may pick a -inf pad in the padded
// run), are skipped.
void compare_pool_indices(const CheckContext& ctx, const Padded& pd, const OpOutputs& run, Findings& f) {
  const PoolGeometry& g = *pool_geo(ctx);
  if (!ctx.cand.indices || !run.indices) return;
  const int64_t out_count = g.spatial.out_count(), in_count = g.spatial.in_count(), pcount = element_count(pd.ext);
  const int64_t windows = std::min({run.indices->size(), ctx.cand.indices->size(), run.y.size(), ctx.cand.y.size()});
  for (int64_t w = 0; w < windows; ++w) {
    const double y = ctx.cand.y[w];
    const bool same_y = same_bits(y, run.y[w]) || (std::isnan(y) && std::isnan(run.y[w]));
    if (!same_y || y == -std::numeric_limits<double>::infinity()) continue;
    const int64_t ip = run.indices->data[static_cast<size_t>(w)];
    const int64_t mine = ctx.cand.indices->data[static_cast<size_t>(w)];
    const int64_t back = ip >= 0 && ip < pcount ? source_flat(g.spatial, pd.src, pd.ext, ip) : -1;
    const std::string win = "window " + at(w, g.y_shape());
    if (back < 0) {
      f.add("pool-index", "on the padded input " + win + " points to padded position " + num(ip) +
                              ", which is not an input element, although y = " + num(y));
      continue;
    }
    const double xb = ctx.in.x[(w / out_count) * in_count + back];
    // An element of -inf selected: a window of only -inf (whatever y the kernel gave it,
    // the argmax check judges that), where the padded run may pick any of its elements.
    if (xb == -std::numeric_limits<double>::infinity()) continue;
    // The same element in both runs maps back whatever y is (a declared FTZ may give 0 for a
    // subnormal maximum); under `any`, another holder of y does too.
    const bool ok = back == mine || (g.tie == TieRule::kAny && (xb == y || (std::isnan(xb) && std::isnan(y))));
    if (ok) continue;
    f.add("pool-index", "indices do not map back: on the padded input " + win + " selects input " +
                            at(back, g.spatial.in_dims()) + ", on the original input index " + num(mine));
  }
}

// Conv: dw and db directly, dx after folding the padded run's dx back onto its sources.
void compare_conv_grads(const CheckContext& ctx, const Padded& pd, const OpOutputs& run, Findings& f, CheckResult& r) {
  const ConvGeometry& g = *conv_geo(ctx);
  if (!ctx.cand.backward.ok() || !run.backward.ok()) return;  // the backward check reports a failing backward
  int64_t n = 0;
  auto report = [&](const std::string& name, const Tensor& got, const Tensor& base, const Tensor& abs,
                    const std::string& why) {
    const std::vector<char> bad =
        disagree(name, got, base, &abs, tolerance_for(ctx, name), r, n, name == "dw" && skips_padding_taps(ctx));
    if (n == 0) return bad;
    const int64_t first = std::find(bad.begin(), bad.end(), 1) - bad.begin();
    f.add("equivalence-" + name, name + " differs from " + why + " at " + num(n) + " of " + num(base.size()) +
                                     " elements, first at " + at(first, base.shape) + ": " + num(got[first]) + " vs " +
                                     num(base[first]));
    return bad;
  };
  report("dw", ctx.cand.dw, run.dw, ctx.abs.dw, "dw on the explicitly padded input");
  if (g.bias) report("db", ctx.cand.db, run.db, ctx.abs.db, "db on the explicitly padded input");
  compare_dx(ctx, pd, run, g.spatial, g.x_shape(), g.mode, f, r);
}

// dx against the padded run's dx folded back onto the elements each padded position
// copies (zero padding copies nothing: the padded run's interior).
void compare_dx(const CheckContext& ctx, const Padded& pd, const OpOutputs& run, const SpatialGeometry& sg,
                const Dims& x_shape, PaddingMode mode, Findings& f, CheckResult& r) {
  if (!ctx.cand.backward.ok() || !run.backward.ok()) return;  // the backward check reports a failing backward
  if (run.dx.size() != pd.in.x.size()) return;                // integrity names the size
  int64_t n = 0;
  const Tensor folded = fold_back(pd, sg, run.dx, x_shape);
  const std::vector<char> bad = disagree("dx", ctx.cand.dx, folded, &ctx.abs.dx, tolerance_for(ctx, "dx"), r, n);
  if (n == 0) return;
  PlaneSet set{sg.in_dims(), std::vector<char>(static_cast<size_t>(sg.in_count()), 0), {}, input_border(sg)};
  for (size_t i = 0; i < bad.size(); ++i) {
    if (bad[i]) set.flagged[i % set.flagged.size()] = 1;
  }
  const std::string where =
      " at " + num(n) + " of " + num(folded.size()) + " elements: input " + describe_positions(set);
  if (mode == PaddingMode::kZeros) {
    f.add("equivalence-dx", "dx differs from the interior of dx on the explicitly zero-padded input" + where);
  } else {
    f.add("equivalence-dx", "dx differs from the padded input's dx folded back onto the elements the padding copies" +
                                where + ": gradients of padded positions must flow back to the elements they copy (" +
                                mode_rule(ctx) + ")");
  }
}

namespace {

// Part (a); returns whether the comparison was made (a case without padding has none).
bool check_equivalence(const CheckContext& ctx, Findings& f, CheckResult& r) {
  auto pd = make_padded(ctx, spatial_of(ctx.geo));
  if (!pd.ok()) {
    f.add("internal", "kernelcheck could not build the explicitly padded case: " + pd.status().to_string());
    return false;
  }
  if (pd->trivial || !padded_run_judges(ctx)) return false;
  const bool pool = max_pool(ctx);
  const OpOutputs run = invoke(ctx.backend, pd->c, pd->geo, pd->in, pool ? Pass::kForward : Pass::kForwardBackward);
  if (!run.forward.ok()) {
    f.add("padded", "the forward on the explicitly padded input (valid padding) returned " + run.forward.to_string());
    return false;
  }
  const SpatialGeometry& sg = spatial_of(ctx.geo);
  compare_y(ctx, sg, run.y, f, r);
  std::visit([&](const auto& g) { compare_padded_run(g, ctx, *pd, run, f, r); }, ctx.geo);
  return true;
}

}  // namespace

// conv, conv_bias_relu and max pool; not where the explicitly padded case is over the
// host-memory cap (a harness limit is no finding about the kernel).
std::string padding_not_applicable(const CheckContext& ctx) {
  auto pd = make_padded(ctx, spatial_of(ctx.geo), false);
  if (pd.ok() || pd.status().code() != StatusCode::kResourceExhausted) return {};
  return "the explicitly padded case it compares with is too large: " + pd.status().message();
}

CheckResult padding_run(const CheckContext& ctx) {
  CheckResult r = make_result("padding", Disposition::kPassed);
  Findings f;
  std::string notes;
  const bool compared = check_equivalence(ctx, f, r);
  std::visit([&](const auto& g) { check_coverage(g, ctx, f, notes); }, ctx.geo);
  const std::string tail = notes.empty() ? "" : "; " + notes.substr(0, notes.size() - 2);
  if (!f.empty()) {
    r.disposition = Disposition::kFailed;
    r.message = f.summary() + tail;
    return r;
  }
  const std::string same = !pool_geo(ctx)     ? "y and the gradients match"
                           : ctx.cand.indices ? "y and indices match"
                                              : "y matches";
  const std::string none = padded_run_judges(ctx) ? "no padding to make explicit; "
                                                  : "not compared with an explicitly padded input (its windows "
                                                    "would divide by other counts there); ";
  r.message = (compared ? same + " the op on the explicitly padded input; " : none) +
              "every input in a window receives gradient and every output is written" + tail;
  return r;
}

}  // namespace kc::checks
