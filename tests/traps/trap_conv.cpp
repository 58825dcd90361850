// Direct-loop convolution for the trap zoo (see trap_conv.h). Layout N C [D] [H] W;
// the loops always run over three spatial dims (SpatialGeometry::as_3d prepends unit
// dims). Every planted bug is one `bug == Bug::k...` test, commented with the real
// failure it imitates; with Bug::kNone nothing here departs from docs/ops.md.
#include "trap_conv.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Core>

namespace kc::traps {
namespace {

// One spatial dim as the kernel resolves it (the contract's unless a bug says otherwise).
struct Dim {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, lo = 0, hi = 0, out = 1;
};

struct Plan {
  std::array<Dim, 3> d;
  size_t rank = 1;
  int64_t N = 1, Cin = 1, Cout = 1, cin_g = 1, cout_g = 1;
  int64_t in_count = 1, out_count = 1, k_count = 1;
  PaddingMode mode = PaddingMode::kZeros;
  Dims y_shape() const {
    Dims s{N, Cout};
    for (size_t a = 3 - rank; a < 3; ++a) s.push_back(d[a].out);
    return s;
  }
};

// One (output position, kernel offset) pair and the in-plane input element it reads,
// -1 where it reads a zero.
struct Tap {
  int64_t o, k, i;
};

// Sums as the kernel forms them: in f64, or rounded to the storage dtype at every step.
struct Sum {
  DType dtype = DType::kF64;
  bool storage = false;
  double overflow_at = INFINITY;  // a partial sum past it becomes the infinity of its sign
  double add(double a, double v) const {
    const double r = storage ? round_to(dtype, a + v) : a + v;
    return std::abs(r) > overflow_at ? std::copysign(INFINITY, r) : r;
  }
  bool plain() const { return !storage && overflow_at == INFINITY; }
};

// Calls body(add) with the sum's add as a functor: a bare f64 `+` for a plain sum (every
// kernel but the accumulation bugs), so that the taps' loops, where the zoo's run time
// goes, compile without the rounding and overflow branches.
template <class Body>
void with_add(const Sum& sum, Body&& body) {
  if (sum.plain()) {
    body([](double a, double v) { return a + v; });
  } else {
    body([&sum](double a, double v) { return sum.add(a, v); });
  }
}

bool asked_same(const ConvSetup& s, const ConvGeometry& g) {
  if (s.form != PadKind::kSame && s.form != PadKind::kSameLower) return false;
  // The same backend also runs the checks' derived cases (an explicitly padded input
  // with `valid`, for one); a kernel told `same` for those would see these pads differ.
  for (const DimGeometry& d : g.spatial.dims) {
    const auto p = resolve_same(d.in, d.kernel, d.stride, d.dilation, s.form == PadKind::kSameLower);
    if (p[0] != d.pad_lo || p[1] != d.pad_hi) return false;
  }
  return true;
}

Plan make_plan(const ConvSetup& s, const ConvGeometry& g) {
  Plan p;
  p.rank = g.spatial.dims.size();
  p.N = g.batch, p.Cin = g.in_channels, p.Cout = g.out_channels;
  p.cin_g = g.in_per_group(), p.cout_g = g.out_per_group();
  p.mode = g.mode;
  const auto g3 = g.spatial.as_3d();
  for (size_t a = 0; a < 3; ++a) {
    const DimGeometry& c = g3[a];
    p.d[a] = {c.in, c.kernel, c.stride, c.dilation, c.pad_lo, c.pad_hi, c.out};
  }
  if (s.bug == Bug::kValidForSame && asked_same(s, g)) {
    // A kernel that knows only explicit padding got `same` mapped to 0: the output erodes.
    for (Dim& d : p.d) {
      d.lo = d.hi = 0;
      d.out = std::max<int64_t>(1, (d.in - d.dilation * (d.kernel - 1) - 1) / d.stride + 1);
    }
  }
  if (s.bug == Bug::kSamePadWrongSide && s.form == PadKind::kSame && asked_same(s, g)) {
    for (Dim& d : p.d) std::swap(d.lo, d.hi);  // the odd pad of an even kernel on lo (SAME_LOWER)
  }
  if (s.bug == Bug::kPadHwSwapped && p.rank >= 2) {  // pads passed as (w, h) to an (h, w) API
    std::swap(p.d[1].lo, p.d[2].lo);
    std::swap(p.d[1].hi, p.d[2].hi);
  }
  if (s.bug == Bug::kDilationOffByOne) {
    for (Dim& d : p.d) d.dilation -= d.dilation > 1;  // dilation read as "holes between taps"
  }
  for (const Dim& d : p.d) {
    p.in_count *= d.in;
    p.out_count *= d.out;
    p.k_count *= d.kernel;
  }
  return p;
}

// The input coordinate that padded coordinate i (relative to the unpadded start) copies,
// or -1 for a zero.
int64_t source(int64_t i, const Dim& d, PaddingMode mode, bool repeat_edge) {
  if (i >= 0 && i < d.in) return i;
  if (i < -d.lo || i >= d.in + d.hi) return -1;  // beyond the padding: nothing there
  int64_t s = -1;
  switch (mode) {
    case PaddingMode::kZeros:
      return -1;
    case PaddingMode::kReplicate:
      return i < 0 ? 0 : d.in - 1;
    case PaddingMode::kCircular:
      return ((i % d.in) + d.in) % d.in;
    case PaddingMode::kReflect:
      // repeat_edge: numpy's `symmetric` used for `reflect` (the edge element repeated).
      s = repeat_edge ? (i < 0 ? -i - 1 : 2 * d.in - 1 - i) : (i < 0 ? -i : 2 * (d.in - 1) - i);
      return s >= 0 && s < d.in ? s : -1;
  }
  return -1;
}

std::vector<Tap> make_taps(const Plan& p, bool unit_stride, bool repeat_edge) {
  std::array<std::vector<int64_t>, 3> src;  // per dim: [out][kernel] -> input coordinate
  for (size_t a = 0; a < 3; ++a) {
    const Dim& d = p.d[a];
    const int64_t s = unit_stride ? 1 : d.stride;
    for (int64_t o = 0; o < d.out; ++o) {
      for (int64_t k = 0; k < d.kernel; ++k)
        src[a].push_back(source(o * s + k * d.dilation - d.lo, d, p.mode, repeat_edge));
    }
  }
  std::vector<Tap> taps;
  taps.reserve(static_cast<size_t>(p.out_count * p.k_count));
  const auto& [D, H, W] = p.d;
  std::vector<std::array<int64_t, 3>> kcoord(static_cast<size_t>(p.k_count));  // each tap's (kd, kh, kw)
  for (int64_t k = 0; k < p.k_count; ++k)
    kcoord[static_cast<size_t>(k)] = {k / (H.kernel * W.kernel), k / W.kernel % H.kernel, k % W.kernel};
  for (int64_t o = 0; o < p.out_count; ++o) {
    const int64_t od = o / (H.out * W.out), oh = o / W.out % H.out, ow = o % W.out;
    const int64_t* sd = &src[0][static_cast<size_t>(od * D.kernel)];
    const int64_t* sh = &src[1][static_cast<size_t>(oh * H.kernel)];
    const int64_t* sw = &src[2][static_cast<size_t>(ow * W.kernel)];
    for (int64_t k = 0; k < p.k_count; ++k) {
      const auto [kd, kh, kw] = kcoord[static_cast<size_t>(k)];
      const bool zero = sd[kd] < 0 || sh[kh] < 0 || sw[kw] < 0;
      taps.push_back({o, k, zero ? -1 : (sd[kd] * H.in + sh[kh]) * W.in + sw[kw]});
    }
  }
  return taps;
}

Sum sum_for(const ConvSetup& s, const Tensor& x) {
  const bool half = x.dtype == DType::kF16 || x.dtype == DType::kBF16;
  // The contract accumulates f16/bf16 in f32; this kernel sums in the storage dtype.
  // An f32 accumulator that holds twice the sum (a scale of 2 applied to the products
  // and undone at the store): it overflows once a partial sum passes half of f32's
  // largest value, although the contract's sum (and the allowance for it) does not.
  const double doubled =
      s.bug == Bug::kDoubledAccumulator && x.dtype != DType::kF64 ? largest_finite(DType::kF32) / 2.0 : INFINITY;
  return {x.dtype, s.bug == Bug::kLowPrecisionAccumulation && half, doubled};
}

// conv(x, w) (+ b when b is given) per [n, co, o], before any relu; `reversed` sums the
// input channels and taps in the opposite order.
std::vector<double> pre_activation(const Plan& p, const std::vector<Tap>& taps, const Tensor& x, const Tensor& w,
                                   const Tensor* b, const Sum& sum, bool reversed = false) {
  std::vector<double> z(static_cast<size_t>(p.N * p.Cout * p.out_count), 0.0);
  for (int64_t n = 0; n < p.N; ++n) {
    for (int64_t co = 0; co < p.Cout; ++co) {
      double* zp = &z[static_cast<size_t>((n * p.Cout + co) * p.out_count)];
      if (b != nullptr) std::fill(zp, zp + p.out_count, (*b)[co]);
      for (int64_t c = 0; c < p.cin_g; ++c) {
        const int64_t ci = reversed ? p.cin_g - 1 - c : c;
        const int64_t cin = (co / p.cout_g) * p.cin_g + ci;
        const double* xp = &x.data[static_cast<size_t>((n * p.Cin + cin) * p.in_count)];
        const double* wp = &w.data[static_cast<size_t>((co * p.cin_g + ci) * p.k_count)];
        with_add(sum, [&](auto add) {
          for (size_t j = 0; j < taps.size(); ++j) {
            const Tap& t = taps[reversed ? taps.size() - 1 - j : j];
            // A zero-padding tap is the product w * 0, as in the contract's xp: NaN where w
            // is infinite or NaN (skipping the tap would say otherwise).
            zp[t.o] = add(zp[t.o], wp[t.k] * (t.i >= 0 ? xp[t.i] : 0.0));
          }
        });
      }
    }
  }
  return z;
}

double relu(double z) { return std::isnan(z) ? z : z > 0.0 ? z : 0.0; }

// Whether output o (flat in-plane) has a window that reads the padding.
bool at_border(const Plan& p, int64_t o) {
  const auto& [D, H, W] = p.d;
  const std::array<int64_t, 3> oc = {o / (H.out * W.out), o / W.out % H.out, o % W.out};
  for (size_t a = 0; a < 3; ++a) {
    const Dim& d = p.d[a];
    const int64_t start = oc[a] * d.stride;
    if (start < d.lo || start + d.dilation * (d.kernel - 1) + 1 > d.lo + d.in) return true;
  }
  return false;
}

// Hands `t` back with the kernel's own shape when it resolved another (valid_for_same).
void reshape(Tensor& t, const Dims& shape) {
  if (t.shape == shape) return;
  t.shape = shape;
  t.data.assign(static_cast<size_t>(element_count(shape)), std::numeric_limits<double>::quiet_NaN());
}

// v converted to the dtype toward zero: the nearest value, or the one below it in
// magnitude when the nearest is larger (a decrement of the magnitude's bit pattern).
template <class T>
double truncate_via(double v) {
  const T r = static_cast<T>(static_cast<float>(v));
  if (!(std::abs(static_cast<double>(static_cast<float>(r))) > std::abs(v))) return static_cast<float>(r);
  const auto bits = Eigen::numext::bit_cast<uint16_t>(r);
  return static_cast<float>(Eigen::numext::bit_cast<T>(static_cast<uint16_t>(bits - 1)));
}

double truncate_to(DType dtype, double v) {
  if (!std::isfinite(v)) return round_to(dtype, v);
  switch (dtype) {
    case DType::kF64:
      return v;
    case DType::kF32: {
      const float f = static_cast<float>(v);
      return std::abs(static_cast<double>(f)) > std::abs(v) ? std::nextafter(f, 0.0f) : f;
    }
    case DType::kF16:
      return truncate_via<Eigen::half>(v);
    case DType::kBF16:
      return truncate_via<Eigen::bfloat16>(v);
  }
  return v;
}

}  // namespace

Status trap_conv_forward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                         bool relu_on, Tensor& y) {
  const Plan p = make_plan(s, g);
  const std::vector<Tap> taps = make_taps(p, false, s.bug == Bug::kReflectRepeatsEdge);
  const bool bias_after_relu = relu_on && s.bug == Bug::kReluBeforeBias;  // relu(conv) + b
  Sum sum = sum_for(s, x);
  bool reversed = false;
  if (s.bug == Bug::kRecomputeDiffers) {
    // An autotuner that times the algorithms again on every call and keeps the fastest:
    // sums in the storage dtype whose order changes from call to call, so that the
    // activations a checkpointed backward recomputes differ from those first stored.
    static std::atomic<uint64_t> calls{0};
    sum = Sum{x.dtype, true};
    reversed = calls.fetch_add(1) % 2 == 1;
  }
  const std::vector<double> z = pre_activation(p, taps, x, w, bias_after_relu ? nullptr : b, sum, reversed);
  reshape(y, p.y_shape());
  for (size_t i = 0; i < z.size(); ++i) {
    const int64_t o = static_cast<int64_t>(i) % p.out_count;
    if (s.bug == Bug::kBorderUnwritten && at_border(p, o)) continue;  // a launch that covers the interior only
    double v = relu_on ? relu(z[i]) : z[i];
    if (bias_after_relu && b != nullptr) v += (*b)[static_cast<int64_t>(i) / p.out_count % p.Cout];
    // An f32 -> bf16 conversion that drops the low 16 bits (or __float2half_rz): each
    // output errs by less than one ulp, always toward zero, so errors add up over depth.
    y.data[i] = s.bug == Bug::kTruncatingConversion ? truncate_to(y.dtype, v) : round_to(y.dtype, v);
    // A conversion that tests the range before rounding (`|v| > 65504 ? inf : ...`): a
    // sum between the largest finite value and the overflow threshold becomes inf.
    if (s.bug == Bug::kOverflowPastMax && std::isfinite(v) && std::abs(v) > largest_finite(y.dtype))
      y.data[i] = std::copysign(INFINITY, v);
  }
  return ok_status();
}

namespace {

constexpr int64_t kRaceChunks = 4;

// Which of the chunks' partial sums a racy accumulation loses this call.
int64_t lost_chunk(int64_t chunks) { return static_cast<int64_t>(race_call() % static_cast<uint64_t>(chunks)); }

// dw[co, ci, k] = sum over n and o of dz[n, co, o] * x[n, cin, tap], with the dw bugs.
void weight_grad(const Plan& p, const std::vector<Tap>& taps, const Tensor& x, const std::vector<double>& dz, Bug bug,
                 const Sum& sum, Tensor& dw) {
  const int64_t positions = p.N * p.out_count;
  const int64_t chunks = bug == Bug::kDwRace ? std::min(kRaceChunks, positions) : 1;
  const int64_t lost = chunks > 1 ? lost_chunk(chunks) : -1;
  // A per-sample launch that overwrites dw instead of adding: only sample 0 is summed.
  const int64_t batches = bug == Bug::kDwNoBatchSum ? 1 : p.N;
  std::vector<double> part(static_cast<size_t>(chunks * p.k_count));
  for (int64_t co = 0; co < p.Cout; ++co) {
    for (int64_t ci = 0; ci < p.cin_g; ++ci) {
      // Grouped dw indexing the input as if groups were 1: every group reads group 0.
      const int64_t cin = bug == Bug::kDwIgnoresGroups ? ci : (co / p.cout_g) * p.cin_g + ci;
      std::fill(part.begin(), part.end(), 0.0);
      for (int64_t n = 0; n < batches; ++n) {
        const double* xp = &x.data[static_cast<size_t>((n * p.Cin + cin) * p.in_count)];
        const double* dzp = &dz[static_cast<size_t>((n * p.Cout + co) * p.out_count)];
        // padding: dz * 0, NaN for dz = NaN
        const auto term = [&](const Tap& t) { return dzp[t.o] * (t.i >= 0 ? xp[t.i] : 0.0); };
        if (bug == Bug::kDwLastPosition) {  // `dw = ...` where `dw += ...` was meant
          for (const Tap& t : taps) part[static_cast<size_t>(t.k)] = term(t);
          continue;
        }
        with_add(sum, [&](auto add) {
          for (const Tap& t : taps) {
            // The racing chunk of this position (one chunk, and no division, without the race).
            const int64_t c = chunks == 1 ? 0 : (n * p.out_count + t.o) * chunks / positions;
            double& acc = part[static_cast<size_t>(c * p.k_count + t.k)];
            acc = add(acc, term(t));
          }
        });
      }
      for (int64_t k = 0; k < p.k_count; ++k) {
        double total = 0.0;
        for (int64_t c = 0; c < chunks; ++c) {
          if (c != lost) total = sum.add(total, part[static_cast<size_t>(c * p.k_count + k)]);  // lost: a racing +=
        }
        if (bug == Bug::kDwMean) total /= static_cast<double>(positions);  // a mean-reduction primitive
        dw[(co * p.cin_g + ci) * p.k_count + k] = round_to(dw.dtype, total);
      }
    }
  }
}

void data_grad(const Plan& p, const std::vector<Tap>& taps, const Tensor& w, const std::vector<double>& dz,
               const Sum& sum, Tensor& dx) {
  std::vector<double> acc(static_cast<size_t>(p.N * p.Cin * p.in_count), 0.0);
  for (int64_t n = 0; n < p.N; ++n) {
    for (int64_t co = 0; co < p.Cout; ++co) {
      const double* dzp = &dz[static_cast<size_t>((n * p.Cout + co) * p.out_count)];
      for (int64_t ci = 0; ci < p.cin_g; ++ci) {
        const int64_t cin = (co / p.cout_g) * p.cin_g + ci;
        double* dxp = &acc[static_cast<size_t>((n * p.Cin + cin) * p.in_count)];
        const double* wp = &w.data[static_cast<size_t>((co * p.cin_g + ci) * p.k_count)];
        with_add(sum, [&](auto add) {
          for (const Tap& t : taps) {
            if (t.i >= 0) dxp[t.i] = add(dxp[t.i], dzp[t.o] * wp[t.k]);
          }
        });
      }
    }
  }
  for (size_t i = 0; i < acc.size(); ++i) dx.data[i] = round_to(dx.dtype, acc[i]);
}

// db[co] = sum over n and o of dz[n, co, o], one thread per channel.
void bias_grad(const Plan& p, const std::vector<double>& dz, Bug bug, const Sum& sum, Tensor& db) {
  const int64_t batches = bug == Bug::kDbNoBatchSum ? 1 : p.N;  // db of sample 0 only
  for (int64_t co = 0; co < p.Cout; ++co) {
    double acc = 0.0;
    for (int64_t n = 0; n < batches; ++n) {
      for (int64_t o = 0; o < p.out_count; ++o)
        acc = sum.add(acc, dz[static_cast<size_t>((n * p.Cout + co) * p.out_count + o)]);
    }
    db[co] = round_to(db.dtype, acc);
  }
  if (bug != Bug::kDbPastEnd) return;
  // A launch rounded up to a whole warp with no `if (co < Cout)`: the threads past the
  // last channel store their empty sum past the end of db (into its guard band here).
  double* raw = db.data.data();
  for (int64_t co = p.Cout; co < (p.Cout + 31) / 32 * 32; ++co) raw[co] = 0.0;
}

}  // namespace

Status trap_conv_backward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                          bool relu_on, const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) {
  const Plan p = make_plan(s, g);
  const bool repeat_edge = s.bug == Bug::kReflectRepeatsEdge;
  const std::vector<Tap> taps = make_taps(p, false, repeat_edge);
  const Sum sum = sum_for(s, x);
  // The cotangent of conv(x, w): dy routed through relu'(z). dy is read with the kernel's
  // own output layout, which is the contract's unless the geometry was mis-resolved.
  const size_t outputs = std::min(dy.data.size(), static_cast<size_t>(p.N * p.Cout * p.out_count));
  std::vector<double> dz(dy.data.begin(), dy.data.begin() + static_cast<std::ptrdiff_t>(outputs));
  dz.resize(static_cast<size_t>(p.N * p.Cout * p.out_count), 0.0);
  const std::vector<double> raw = dz;
  if (relu_on) {
    const bool bias_after_relu = s.bug == Bug::kReluBeforeBias;
    const std::vector<double> z = pre_activation(p, taps, x, w, bias_after_relu ? nullptr : b, sum);
    for (size_t i = 0; i < dz.size(); ++i) {
      // relu'(0) taken as 1 (`z >= 0`): a subgradient choice no framework makes.
      const bool pass = s.bug == Bug::kReluGradAtZeroOne ? z[i] >= 0.0 : z[i] > 0.0;
      dz[i] = pass ? dz[i] : 0.0;
    }
    if (s.bug == Bug::kWritesInput) {  // an in-place activation backward: dy is overwritten
      Tensor& scratch = const_cast<Tensor&>(dy);
      std::copy(dz.begin(), dz.end(), scratch.data.begin());
    }
  }
  std::vector<double> moved;  // dy as the channels-last kernel reads it
  if (s.bug == Bug::kDyChannelsLast) {
    moved.resize(dz.size());
    // A backward-data kernel written for a channels-last dy, [N, out..., Cout], fed the
    // contract's [N, Cout, out...]: the right values in the wrong places (dw is right).
    for (int64_t n = 0; n < p.N; ++n) {
      for (int64_t co = 0; co < p.Cout; ++co) {
        for (int64_t o = 0; o < p.out_count; ++o) {
          moved[static_cast<size_t>((n * p.Cout + co) * p.out_count + o)] =
              dz[static_cast<size_t>((n * p.out_count + o) * p.Cout + co)];
        }
      }
    }
  }
  const bool unit_stride = s.bug == Bug::kDxIgnoresStride;  // dx loops written for stride 1
  data_grad(p, unit_stride ? make_taps(p, true, repeat_edge) : taps, w, moved.empty() ? dz : moved, sum, dx);
  if (s.bug == Bug::kBorderGradientDropped && p.rank >= 2) {
    // A backward-data grid that starts at input row 1: row 0, which fewer windows reach,
    // keeps no gradient (dx is written as 0 there).
    const int64_t width = p.d[2].in, rows_per_plane = p.d[0].in * p.d[1].in;
    for (int64_t plane = 0; plane < p.N * p.Cin; ++plane) {
      for (int64_t r = 0; r < rows_per_plane; r += p.d[1].in) {
        for (int64_t i = 0; i < width; ++i)
          dx.data[static_cast<size_t>((plane * rows_per_plane + r) * width + i)] = 0.0;
      }
    }
  }
  weight_grad(p, taps, x, dz, s.bug, sum, dw);
  // relu(conv) + b: the bias sits after the relu, so db sums the raw dy.
  if (db != nullptr) bias_grad(p, relu_on && s.bug == Bug::kReluBeforeBias ? raw : dz, s.bug, sum, *db);
  return ok_status();
}

}  // namespace kc::traps
