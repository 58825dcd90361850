// Ambiguous relu derivatives of conv_bias_relu: see relu_ambiguity.h.
#include "relu_ambiguity.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "judge/tolerance.h"
#include "window.h"

namespace kc::checks {

namespace {

constexpr int kNoTerm = std::numeric_limits<int>::max();

// log2 of the largest power of two v is a whole multiple of: its exponent less the
// trailing zeros of its 53-bit significand (1.0 gives 0, 0.75 gives -2, 2^-131 gives
// -131). kNoTerm for 0 and non-finite values (they add no rounding of their own).
int quantum_log2(double v) {
  if (v == 0.0 || !std::isfinite(v)) return kNoTerm;
  int e = 0;
  const double m = std::frexp(std::abs(v), &e);  // v = m 2^e, m in [0.5, 1)
  const auto significand = static_cast<uint64_t>(std::ldexp(m, 53));
  return e - 53 + std::countr_zero(significand);
}

int add_quanta(int a, int b) { return a == kNoTerm || b == kNoTerm ? kNoTerm : a + b; }

// Per output of the conv: log2 of a quantum Q every term of its sum (w*x over its window,
// and b) is a whole multiple of, from the smallest quantum among its window's x (every
// input channel of its group) plus the smallest among its filter's w; kNoTerm when every
// term is 0. With zero padding the window is its taps inside the input; other padding
// modes take their pad values from anywhere in the plane, so the whole plane counts.
std::vector<int> output_quanta(const CheckContext& ctx, const ConvGeometry& g) {
  const SpatialGeometry& sg = g.spatial;
  const int64_t plane = sg.in_count(), positions = sg.out_count(), cin = g.in_per_group(), cout = g.out_per_group();
  std::vector<int> qx(static_cast<size_t>(ctx.in.x.size()));
  for (int64_t i = 0; i < ctx.in.x.size(); ++i) qx[static_cast<size_t>(i)] = quantum_log2(ctx.in.x[i]);
  std::vector<int> qw(static_cast<size_t>(g.out_channels), kNoTerm);
  const int64_t filter = ctx.in.w.size() / g.out_channels;
  for (int64_t i = 0; i < ctx.in.w.size(); ++i) {
    int& q = qw[static_cast<size_t>(i / filter)];
    q = std::min(q, quantum_log2(ctx.in.w[i]));
  }
  // With other padding modes the pad values come from anywhere in the plane.
  const bool whole_plane = g.mode != PaddingMode::kZeros;
  std::vector<int> everywhere(static_cast<size_t>(g.batch * g.groups), kNoTerm);  // per sample and group
  for (size_t i = 0; whole_plane && i < qx.size(); ++i) {
    const size_t c = i / static_cast<size_t>(plane);  // n * in_channels + channel
    const size_t ng = c / static_cast<size_t>(g.in_channels) * static_cast<size_t>(g.groups) +
                      c % static_cast<size_t>(g.in_channels) / static_cast<size_t>(cin);
    everywhere[ng] = std::min(everywhere[ng], qx[i]);
  }
  std::vector<int> q(static_cast<size_t>(g.batch * g.out_channels * positions), kNoTerm);
  for (int64_t o = 0; o < positions; ++o) {
    const std::vector<int64_t> taps =
        whole_plane ? std::vector<int64_t>{} : rules::window_taps(sg, unravel(o, sg.out_dims()));
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        // The smallest quantum of x under window o, over the group's input channels.
        int window = whole_plane ? everywhere[static_cast<size_t>(n * g.groups + grp)] : kNoTerm;
        for (int64_t c = 0; c < cin && !whole_plane; ++c) {
          const size_t base = static_cast<size_t>((n * g.in_channels + grp * cin + c) * plane);
          for (int64_t t : taps) window = std::min(window, qx[base + static_cast<size_t>(t)]);
        }
        for (int64_t co = grp * cout; co < (grp + 1) * cout; ++co) {
          const double b = g.bias ? ctx.in.b[co] : 0.0;
          q[static_cast<size_t>((n * g.out_channels + co) * positions + o)] =
              std::min(add_quanta(window, qw[static_cast<size_t>(co)]), quantum_log2(b));
        }
      }
    }
  }
  return q;
}

// Per output: whether the candidate's sum is exact, so that its pre-activation is 0
// exactly where the oracle's is: every term w*x and b is a multiple of the output's
// quantum Q (output_quanta), Q is no smaller than the accumulation's smallest normal
// number (below it products round to 0 or to a subnormal, and a kernel may flush
// those), and every partial sum stays below 2^p Q for the p-bit accumulation (it is at
// most the sum of the terms' magnitudes, abs.y), so no product or partial sum rounds.
// Integer data passes; tiny terms beside large ones in the same sum (subnormal x next to
// 0.2) do not, and a 0 there may be a nonzero sum whose smallest terms the additions
// absorbed. A tiny element elsewhere (another window, sample or filter) leaves this
// output exact.
std::vector<bool> exact_sums(const CheckContext& ctx, const ConvGeometry& g) {
  const ToleranceSpec spec = tolerance_for(ctx, "y");
  if (spec.transform_growth > 0.0)
    return std::vector<bool>(static_cast<size_t>(ctx.abs.y.size()), false);  // a transform rounds exact sums too
  const std::vector<int> q = output_quanta(ctx, g);
  const DType acc = accumulation_of(spec);
  const int p = -std::ilogb(unit_roundoff(acc));  // u = 2^-p
  const int normal = min_normal_exponent(acc);
  std::vector<bool> exact(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const double most = ctx.abs.y[static_cast<int64_t>(i)];
    exact[i] = q[i] == kNoTerm || (q[i] >= normal && std::isfinite(most) && most < std::ldexp(1.0, p + q[i]));
  }
  return exact;
}

}  // namespace

ReluAmbiguity relu_ambiguity(const CheckContext& ctx, const ConvGeometry& g) {
  ReluAmbiguity a;
  a.z = ref::conv_forward(g, ctx.in.x, ctx.in.w, &ctx.in.b);
  a.ambiguous.assign(static_cast<size_t>(a.z.size()), false);
  const ToleranceSpec spec = tolerance_for(ctx, "y");
  const std::vector<bool> exact = exact_sums(ctx, g);
  for (int64_t i = 0; i < a.z.size(); ++i) {
    // A 0 from exact sums is not ambiguous: relu'(0) = 0 is the contract, and a kernel
    // gets that 0 exactly too. A 0 from inexact sums may be a tiny nonzero sum a kernel
    // gets right, or a kernel's rounding may move it off 0 (see exact_sums).
    const double z = a.z[i];
    const bool near = z != 0.0 || (!exact[static_cast<size_t>(i)] && ctx.abs.y[i] > 0.0);
    // A sum whose finite terms pass the accumulator's range may overflow to either
    // infinity (or NaN) on the way, so relu' may take either side too.
    const bool overflows = accumulator_may_overflow(spec, i, ctx.abs.y[i]);
    if ((near && std::abs(z) < element_bound(spec, z, ctx.abs.y[i])) || overflows) {
      a.ambiguous[static_cast<size_t>(i)] = true;
      ++a.count;
    }
  }
  return a;
}

ref::ConvGrads ambiguity_slack(const CheckContext& ctx, const ConvGeometry& g, const ReluAmbiguity& a) {
  Tensor dy = Tensor::zeros(DType::kF64, a.z.shape);
  for (int64_t i = 0; i < dy.size(); ++i) {
    if (a.ambiguous[static_cast<size_t>(i)]) dy[i] = std::abs(ctx.in.dy[i]);
  }
  ref::ConvGrads s = ref::conv_backward(g, absolute(ctx.in.x), absolute(ctx.in.w), dy);
  s.db = ref::conv_backward_bias(g, dy);
  return s;
}

Swamping swamping(const ReluAmbiguity& a, const ref::ConvGrads& slack, const OpOutputs& ref) {
  Swamping out;
  out.ambiguous = a.count;
  out.outputs = a.z.size();
  const std::tuple<const char*, const Tensor*, const Tensor*> grads[] = {
      {"dx", &slack.dx, &ref.dx}, {"dw", &slack.dw, &ref.dw}, {"db", &slack.db, &ref.db}};
  for (const auto& [name, moved, want] : grads) {
    if (moved->size() == 0 || moved->size() != want->size()) continue;
    Swamping::Reach r{name};
    for (int64_t i = 0; i < moved->size(); ++i) {
      if ((*moved)[i] == 0.0 && (*want)[i] == 0.0) continue;  // judged exactly: it shows nothing
      r.clear += (*moved)[i] < 0.5 * std::abs((*want)[i]);
      ++r.elements;
    }
    out.reaches.push_back(r);
  }
  return out;
}

namespace {

std::string swamp_message(const Swamping& s, int64_t judged, int64_t elements, const std::string& what) {
  return std::to_string(s.ambiguous) + " of " + std::to_string(s.outputs) +
         " pre-activations are within rounding of 0, where either side of relu' is right; they may move all but " +
         std::to_string(judged) + " of the " + std::to_string(elements) + " " + what +
         " elements they reach or the oracle makes nonzero by half their size or more, so the data cannot judge "
         "the relu mask at this precision (use data further from 0, a smaller reduction or a wider accumulation)";
}

bool skipped(const Swamping::Reach& r, bool with_dx) { return !with_dx && std::string_view(r.name) == "dx"; }

}  // namespace

std::string Swamping::all(bool with_dx) const {
  if (ambiguous == 0) return {};
  int64_t judged = 0, elements = 0;
  for (const Reach& r : reaches) {
    if (skipped(r, with_dx)) continue;
    if (!r.swamped()) return {};
    judged += r.clear;
    elements += r.elements;
  }
  return swamp_message(*this, judged, elements, "gradient");
}

std::string Swamping::one(bool with_dx) const {
  if (ambiguous == 0) return {};
  for (const Reach& r : reaches) {
    if (!skipped(r, with_dx) && r.swamped()) return swamp_message(*this, r.clear, r.elements, r.name);
  }
  return {};
}

int64_t nan_preactivations(const ReluAmbiguity& a) {
  int64_t n = 0;
  for (int64_t i = 0; i < a.z.size(); ++i) n += std::isnan(a.z[i]);
  return n;
}

FusedExpectation fused_expectation(const CheckContext& ctx, const ConvGeometry& g, bool nan_passes) {
  FusedExpectation e;
  const ReluAmbiguity a = relu_ambiguity(ctx, g);
  e.ambiguous = a.count;
  if (a.count == 0 && !(nan_passes && nan_preactivations(a) > 0)) return e;
  Tensor dz = Tensor::zeros(DType::kF64, a.z.shape);
  for (int64_t i = 0; i < a.z.size(); ++i) {
    const bool routes = a.z[i] > 0.0 || (nan_passes && std::isnan(a.z[i]));
    if (!a.ambiguous[static_cast<size_t>(i)] && routes) dz[i] = ctx.in.dy[i];
  }
  e.want = ref::conv_backward(g, ctx.in.x, ctx.in.w, dz);
  e.want.db = ref::conv_backward_bias(g, dz);
  if (a.count > 0) {
    e.slack = ambiguity_slack(ctx, g, a);
    e.swamp = swamping(a, e.slack, ctx.ref);
  }
  return e;
}

}  // namespace kc::checks
