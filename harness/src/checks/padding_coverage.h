// Part (b) of the padding check: coverage and written outputs, on inputs chosen so that
// the answer is known from the geometry alone (no oracle, so the oracle can check itself).
//  conv: x, w, b and dy all ones (positive, so a relu mask is all on). Every input element
//        that lies in some window, directly or as the source of a padding copy, gets a
//        positive dx; an element in no window gets exactly 0; every output is written and
//        nonzero where its window reads at least one 1 (or there is a bias).
//  max pool (run in training mode): distinct negative x and dy = 1. Every window's
//        maximum receives gradient, no output is left NaN, and no y is 0 (only a padding
//        read as 0 instead of -inf can produce it).
//  others (the op module's check_coverage): check_ones_coverage on their own all-ones
//        inputs (an average pool: x and dy, with the conv rule for zero padding).
// Blind spots and unwritten outputs are named by slice: "input rows 0 and 16 (the border)".
#pragma once

#include <cmath>
#include <numeric>
#include <string>

#include "backend/invoke.h"
#include "common.h"
#include "findings.h"
#include "window.h"

namespace kc::checks::rules {
namespace coverage_detail {

// Per dim: whether input coordinate i is read by some window, directly or through a
// padding copy (zeros padding copies nothing).
inline std::vector<std::vector<char>> covered_coords(const SpatialGeometry& s, PaddingMode mode) {
  std::vector<std::vector<char>> cov;
  for (const DimGeometry& d : s.dims) {
    std::vector<char> c(static_cast<size_t>(d.in), 0);
    for (int64_t o = 0; o < d.out; ++o) {
      for (int64_t k = 0; k < d.kernel; ++k) {
        int64_t i = o * d.stride + k * d.dilation - d.pad_lo;
        if (i < 0 || i >= d.in) {
          if (mode == PaddingMode::kZeros) continue;
          if (mode == PaddingMode::kReplicate) i = i < 0 ? 0 : d.in - 1;
          if (mode == PaddingMode::kReflect) i = i < 0 ? -i : 2 * (d.in - 1) - i;
          if (mode == PaddingMode::kCircular) i = ((i % d.in) + d.in) % d.in;
        }
        c[static_cast<size_t>(i)] = 1;
      }
    }
    cov.push_back(std::move(c));
  }
  return cov;
}
inline std::vector<std::vector<char>> covered_coords(const ConvGeometry& g) {
  return covered_coords(g.spatial, g.mode);
}

// A PlaneSet over one spatial extent whose eligible mask is the product of per-dim masks.
inline PlaneSet product_set(const Dims& extents, const std::vector<std::vector<char>>& per_dim,
                            std::vector<std::vector<char>> border) {
  const int64_t count = element_count(extents);
  PlaneSet s{extents, std::vector<char>(static_cast<size_t>(count), 0),
             std::vector<char>(static_cast<size_t>(count), 1), std::move(border)};
  for (int64_t p = 0; p < count && !per_dim.empty(); ++p) {
    const std::vector<int64_t> c = unravel(p, extents);
    for (size_t a = 0; a < c.size(); ++a) s.eligible[static_cast<size_t>(p)] &= per_dim[a][static_cast<size_t>(c[a])];
  }
  return s;
}

// Outputs left NaN, or 0 where `nonzero` says the value cannot be 0, named by slice: "not
// written" where every one still holds the poison, else wrong values (a NaN or a 0 the
// backend wrote: on all-ones inputs neither can come from the arithmetic).
inline void check_outputs_written(const SpatialGeometry& sg, const Tensor& y,
                                  const std::vector<std::vector<char>>& nonzero, const std::string& inputs,
                                  Findings& f) {
  PlaneSet set = product_set(sg.out_dims(), {}, output_border(sg));
  const int64_t out_count = sg.out_count();
  int64_t n = 0, poisoned = 0;
  for (int64_t i = 0; i < y.size(); ++i) {
    const int64_t o = i % out_count;
    const std::vector<int64_t> oc = unravel(o, sg.out_dims());
    bool must = true;
    for (size_t a = 0; a < oc.size() && !nonzero.empty(); ++a) must = must && nonzero[a][static_cast<size_t>(oc[a])];
    if (!(std::isnan(y[i]) || (must && y[i] == 0.0))) continue;
    set.flagged[static_cast<size_t>(o)] = 1;
    ++n;
    poisoned += is_poison(y[i]);
  }
  if (n == 0) return;
  bool border = false;
  const std::string where = describe_positions(set, &border);
  const std::string which =
      where == "every position" ? "all " + num(n) + " outputs of y are" : num(n) + " outputs at y " + where + " are";
  if (poisoned == n) {
    f.add("written", std::string(border ? "border outputs not written: " : "outputs not written: ") + which +
                         " NaN (the poison) on " + inputs);
    return;
  }
  f.add("written", std::string(border ? "wrong border outputs: " : "wrong outputs: ") + which + " NaN or 0 on " +
                       inputs + ", which no arithmetic on them gives (" + num(poisoned) + " of them " +
                       "still the poison, never written; the rest written wrong, e.g. from a stale buffer)");
}

// With all-ones inputs: a covered element with dx 0 or NaN is a blind spot; an element in
// no window must get exactly 0.
inline void check_blind_spots(const SpatialGeometry& s, PaddingMode mode, const Dims& x_shape, const Tensor& dx,
                              Findings& f, const std::string& inputs = "all-ones x, w and dy") {
  const std::vector<std::vector<char>> cov = covered_coords(s, mode);
  PlaneSet blind = product_set(s.in_dims(), cov, input_border(s));
  const int64_t in_count = s.in_count();
  int64_t stray = -1;
  for (int64_t i = 0; i < dx.size(); ++i) {
    const size_t p = static_cast<size_t>(i % in_count);
    const double v = dx[i];
    if (blind.eligible[p] && (v == 0.0 || std::isnan(v))) blind.flagged[p] = 1;
    if (!blind.eligible[p] && !(v == 0.0) && stray < 0) stray = i;
  }
  if (std::find(blind.flagged.begin(), blind.flagged.end(), 1) != blind.flagged.end()) {
    bool border = false;
    const std::string where = describe_positions(blind, &border);
    f.add("blind",
          border ? "input " + where + " receive no gradient: dropped border (" + inputs + ")"
          : where == "every position"
              ? "no input element receives gradient, though each lies in a window (" + inputs + ")"
              : "blind spot at input " + where + ": it lies in a window but receives no gradient (" + inputs + ")");
  }
  if (stray >= 0) {
    f.add("stray", "dx at input " + at(stray, x_shape) + " is " + num(dx[stray]) +
                       " but the element lies in no window: its gradient must be exactly 0");
  }
}

}  // namespace coverage_detail

// The run on all-ones inputs (`ones`) shared by conv and average pool: y written and
// nonzero where `always_nonzero` or its window reads an input element; dx positive on
// every element some window reads (through `mode`'s copies) and exactly 0 elsewhere.
inline void check_ones_coverage(const CheckContext& ctx, const OpInputs& ones, const SpatialGeometry& s,
                                PaddingMode mode, bool always_nonzero, const std::string& inputs, Findings& f,
                                std::string& notes) {
  using namespace coverage_detail;
  const OpOutputs run = invoke(ctx.backend, ctx.c, ctx.geo, ones);
  if (!run.forward.ok()) {
    f.add("ones", "the forward on all-ones inputs returned " + run.forward.to_string());
    return;
  }
  std::vector<std::vector<char>> nonzero;
  for (const DimGeometry& d : s.dims) {
    std::vector<char> nz(static_cast<size_t>(d.out));
    for (int64_t o = 0; o < d.out; ++o) nz[static_cast<size_t>(o)] = always_nonzero || touches_input(d, o);
    nonzero.push_back(std::move(nz));
  }
  check_outputs_written(s, run.y, nonzero, "all-ones inputs", f);
  if (!run.backward.ok()) {
    if (unsupported(run.backward))
      notes += "backward not supported, coverage not checked; ";
    else
      f.add("ones", "the backward on all-ones inputs returned " + run.backward.to_string());
    return;
  }
  if (run.dx.size() == ones.x.size()) check_blind_spots(s, mode, ones.x.shape, run.dx, f, inputs);  // else integrity
}

// y is a count of taps that read a 1 (plus the bias): nonzero unless the window reads
// only zero padding and there is no bias.
inline void check_conv_coverage(const CheckContext& ctx, const ConvGeometry& g, Findings& f, std::string& notes) {
  OpInputs ones;
  ones.x = Tensor::filled(ctx.c.dtype, g.x_shape(), 1.0);
  ones.w = Tensor::filled(ctx.c.dtype, g.w_shape(), 1.0);
  if (g.bias) ones.b = Tensor::filled(ctx.c.dtype, g.b_shape(), 1.0);
  ones.dy = Tensor::filled(ctx.c.dtype, g.y_shape(), 1.0);
  check_ones_coverage(ctx, ones, g.spatial, g.mode, g.bias || g.mode != PaddingMode::kZeros, "all-ones x, w and dy", f,
                      notes);
}

// Distinct negative values per plane: i -> -(1 + (i*a + 3) mod M) with a coprime to M is a
// permutation, so every window has one maximum (up to rounding to the dtype).
inline Tensor distinct_negative(const PoolGeometry& g, DType dtype) {
  Tensor x = Tensor::zeros(dtype, g.x_shape());
  const int64_t m = g.spatial.in_count();
  int64_t a = 7919;
  while (std::gcd(a, m) != 1) a += 2;
  for (int64_t i = 0; i < x.size(); ++i) x[i] = -(1.0 + static_cast<double>(((i % m) * a + 3) % m));
  x.round_to_dtype(dtype);
  return x;
}

inline void check_pool_coverage(const CheckContext& ctx, const PoolGeometry& g0, Findings& f, std::string& notes) {
  using namespace coverage_detail;
  PoolGeometry g = g0;
  g.mode = PoolMode::kTraining;  // coverage needs a backward, which needs indices
  Case c = ctx.c;
  std::get<MaxPoolParams>(c.op).mode = PoolMode::kTraining;
  OpInputs in;
  in.x = distinct_negative(g, ctx.c.dtype);
  in.dy = Tensor::filled(ctx.c.dtype, g.y_shape(), 1.0);
  const OpOutputs run = invoke(ctx.backend, c, OpGeometry{g}, in);
  if (!run.forward.ok() || !run.backward.ok()) {
    const Status& s = run.forward.ok() ? run.backward : run.forward;
    if (unsupported(s))
      notes += "training mode not supported, coverage not checked; ";
    else
      f.add("distinct", "the training-mode run on distinct inputs returned " + s.to_string());
    return;
  }
  if (run.y.size() != in.dy.size() || run.dx.size() != in.x.size()) return;  // integrity names the size
  check_outputs_written(g.spatial, run.y, {}, "distinct negative inputs (a 0 means padding read as 0, not -inf)", f);
  PlaneSet blind = product_set(g.spatial.out_dims(), {}, output_border(g.spatial));
  const int64_t out_count = g.spatial.out_count(), in_count = g.spatial.in_count();
  for (int64_t w = 0; w < run.y.size(); ++w) {
    const std::vector<int64_t> taps = window_taps(g.spatial, unravel(w % out_count, g.spatial.out_dims()));
    const int64_t base = (w / out_count) * in_count;
    double m = -INFINITY;
    for (int64_t t : taps) m = std::max(m, in.x[base + t]);
    bool received = false;
    for (int64_t t : taps) received = received || (in.x[base + t] == m && run.dx[base + t] > 0.0);
    if (!received) blind.flagged[static_cast<size_t>(w % out_count)] = 1;
  }
  if (std::find(blind.flagged.begin(), blind.flagged.end(), 1) == blind.flagged.end()) return;
  const std::string where = describe_positions(blind);
  const std::string what = where == "every position"
                               ? "not one window routes a gradient to its maximum"
                               : "the windows at output " + where + " route no gradient to their maximum";
  f.add("blind", what + " (distinct inputs, dy = 1)");
}

}  // namespace kc::checks::rules
