// Direct-loop max and average pooling for the trap zoo (see trap_pool.h). Windows are
// scanned in row-major kernel order over three spatial dims (as_3d prepends unit dims).
// Every planted bug is one `bug == Bug::k...` test, commented with the real failure it
// imitates.
#include "trap_pool.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace kc::traps {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Dim {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, lo = 0, hi = 0, out = 1;
};

struct Plan {
  std::array<Dim, 3> d;
  size_t rank = 1;
  int64_t planes = 1, in_count = 1, out_count = 1;
  Dims y_shape(const PoolGeometry& g) const {
    Dims s{g.batch, g.channels};
    for (size_t a = 3 - rank; a < 3; ++a) s.push_back(d[a].out);
    return s;
  }
};

Plan make_plan(Bug bug, const PoolGeometry& g) {
  Plan p;
  p.rank = g.spatial.dims.size();
  p.planes = g.batch * g.channels;
  const auto g3 = g.spatial.as_3d();
  for (size_t a = 0; a < 3; ++a) {
    const DimGeometry& c = g3[a];
    Dim& d = p.d[a];
    d = {c.in, c.kernel, c.stride, c.dilation, c.pad_lo, c.pad_hi, c.out};
    if (bug == Bug::kPoolCeilExtraWindow && g.ceil_mode) {
      // ceil without the drop rule: a last window that starts in the right padding is kept.
      const int64_t span = d.in + d.lo + d.hi - d.dilation * (d.kernel - 1) - 1;
      d.out = (span + d.stride - 1) / d.stride + 1;
    }
    p.in_count *= d.in;
    p.out_count *= d.out;
  }
  return p;
}

struct Best {
  double y = -kInf;
  int64_t index = -1;  // in-plane; -1 when no element was taken
};

bool last_wins(Bug bug, TieRule tie) {
  // `>=` where `>` was meant: tie first resolved as last.
  return tie == TieRule::kLast || (bug == Bug::kPoolLastTie && tie == TieRule::kFirst);
}

// Calls tap(flat, inside, in_pad) for each tap of window o in scan order (row-major over
// the kernel): its in-plane position, whether it lies inside the input, and whether it
// lies inside the input or its padding.
template <typename Tap>
void for_each_tap(const Plan& p, int64_t o, Tap tap) {
  const auto& [D, H, W] = p.d;
  const std::array<int64_t, 3> oc = {o / (H.out * W.out), o / W.out % H.out, o % W.out};
  for (int64_t k = 0; k < D.kernel * H.kernel * W.kernel; ++k) {
    const std::array<int64_t, 3> kk = {k / (H.kernel * W.kernel), k / W.kernel % H.kernel, k % W.kernel};
    int64_t flat = 0;
    bool inside = true, in_pad = true;
    for (size_t a = 0; a < 3; ++a) {
      const Dim& d = p.d[a];
      const int64_t i = oc[a] * d.stride + kk[a] * d.dilation - d.lo;
      inside = inside && i >= 0 && i < d.in;
      in_pad = in_pad && i >= -d.lo && i < d.in + d.hi;
      flat = flat * d.in + i;
    }
    tap(flat, inside, in_pad);
  }
}

// The maximum of window o of one plane under the tie and NaN rules.
Best scan(Bug bug, const Plan& p, TieRule tie, const double* plane, int64_t o) {
  const bool last = last_wins(bug, tie);
  Best b;
  bool nan = false, padded = false;
  for_each_tap(p, o, [&](int64_t flat, bool inside, bool in_pad) {
    if (!inside) {
      padded = padded || in_pad;
      return;
    }
    const double v = plane[flat];
    if (std::isnan(v)) {
      if (bug == Bug::kPoolIgnoresNan) return;  // `v > best` is false for NaN: it is skipped
      if (!nan || last) b.index = flat;
      nan = true;
      return;
    }
    if (nan) return;
    // The first element inside the input starts the scan, so a window of only -inf
    // points to an element of it; initialising with index -1 and comparing `>` never takes a -inf.
    const bool first = b.index < 0 && bug != Bug::kPoolIndexMinusOne;
    // A `last` scan written `v == best && v != -inf` (as a guard against the padding's
    // -inf) keeps the first element of a window of only -inf.
    const bool tie_moves = last && v == b.y && !(bug == Bug::kPoolMinusInfKeepsFirst && v == -kInf);
    if (first || v > b.y || tie_moves) b = {v, flat};
  });
  if (nan) b.y = std::numeric_limits<double>::quiet_NaN();
  // Padding materialised as zeros (a zero-padded buffer reused from conv), not -inf.
  if (bug == Bug::kPoolPadZero && padded && !nan && b.y < 0.0) b.y = 0.0;
  return b;
}

void reshape(Tensor& y, IndexTensor* indices, const Dims& shape) {
  if (y.shape != shape) {
    y.shape = shape;
    y.data.assign(static_cast<size_t>(element_count(shape)), std::numeric_limits<double>::quiet_NaN());
  }
  if (indices != nullptr && indices->shape != shape) {
    indices->shape = shape;
    indices->data.assign(static_cast<size_t>(element_count(shape)), -1);
  }
}

}  // namespace

Status trap_pool_forward(Bug bug, const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) {
  const Plan p = make_plan(bug, g);
  reshape(y, indices, p.y_shape(g));
  // The inference path taken in training mode: no indices are kept.
  if (bug == Bug::kPoolInferenceInTraining) indices = nullptr;
  for (int64_t pl = 0; pl < p.planes; ++pl) {
    const double* plane = &x.data[static_cast<size_t>(pl * p.in_count)];
    for (int64_t o = 0; o < p.out_count; ++o) {
      const Best b = scan(bug, p, g.tie, plane, o);
      const size_t w = static_cast<size_t>(pl * p.out_count + o);
      y.data[w] = round_to(y.dtype, b.y);
      if (indices == nullptr) continue;
      // An index into the whole tensor (n, c included) instead of the (n, c) plane.
      const bool global = bug == Bug::kPoolIndexWithBatch && b.index >= 0;
      indices->data[w] = global ? b.index + pl * p.in_count : b.index;
    }
  }
  return ok_status();
}

Status trap_pool_backward(Bug bug, const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, const Tensor* x,
                          Tensor& dx) {
  if (bug == Bug::kPoolInferenceInTraining) {  // no indices, so no routing: silently zero
    for (double& v : dx.data) v = 0.0;
    return ok_status();
  }
  if (indices == nullptr) {
    return failed_precondition("max pool backward needs the argmax indices of a training-mode forward");
  }
  const Plan p = make_plan(bug, g);
  std::vector<double> acc(dx.data.size(), 0.0);
  const size_t windows = std::min(dy.data.size(), indices->data.size());
  // A scatter with atomicAdd: overlapping windows add into one dx element in the order
  // their threads happen to run, in f32 (the dtype's own precision in f64), so the last
  // bits of dx change from run to run. A correct kernel gathers in a fixed order.
  std::vector<size_t> order(windows);
  std::iota(order.begin(), order.end(), size_t{0});
  const DType atomic_dtype = dx.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  if (bug == Bug::kPoolAtomicDx) std::shuffle(order.begin(), order.end(), std::mt19937_64(race_call()));
  for (size_t w : order) {
    const int64_t index = indices->data[w];
    const int64_t plane = static_cast<int64_t>(w) / p.out_count;
    const int64_t target = bug == Bug::kPoolIndexWithBatch ? index : plane * p.in_count + index;
    if (index < 0 || target < 0 || target >= static_cast<int64_t>(acc.size())) continue;  // nothing to route to
    if (bug == Bug::kPoolTieMask && x != nullptr && x->data.size() == acc.size()) {
      // The mask x == y of a backward that recomputes where the maximum is instead of
      // reading the argmax: a window whose maximum is tied sends its dy to every holder.
      const double* xp = &x->data[static_cast<size_t>(plane * p.in_count)];
      const double max = xp[index];
      for_each_tap(p, static_cast<int64_t>(w) % p.out_count, [&](int64_t flat, bool inside, bool) {
        if (inside && xp[flat] == max) acc[static_cast<size_t>(plane * p.in_count + flat)] += dy.data[w];
      });
      continue;
    }
    double& t = acc[static_cast<size_t>(target)];
    t = bug == Bug::kPoolOverlapOverwrites ? dy.data[w] : t + dy.data[w];  // `=` where overlaps must add
    if (bug == Bug::kPoolAtomicDx) t = round_to(atomic_dtype, t);
  }
  for (size_t i = 0; i < acc.size(); ++i) dx.data[i] = round_to(dx.dtype, acc[i]);
  return ok_status();
}

namespace {

// Average pooling: window o of a plane, tap by tap in row-major kernel order; the sum of
// the taps inside the input and the two counts a divisor is made of.
struct AvgWindow {
  std::vector<int64_t> taps;  // in-plane positions of the taps inside the input
  int64_t padded = 0;         // taps inside the input or its padding [-lo, in + hi)
  int64_t kernel = 1;         // all taps, the ceil-mode overhang past the padding included
};

AvgWindow avg_window(Bug bug, const AvgPoolGeometry& g, int64_t o) {
  const auto d = g.spatial.as_3d();
  const std::array<int64_t, 3> oc = {o / (d[1].out * d[2].out), o / d[2].out % d[1].out, o % d[2].out};
  AvgWindow w;
  w.kernel = d[0].kernel * d[1].kernel * d[2].kernel;
  for (int64_t k = 0; k < w.kernel; ++k) {
    const std::array<int64_t, 3> kk = {k / (d[1].kernel * d[2].kernel), k / d[2].kernel % d[1].kernel, k % d[2].kernel};
    int64_t flat = 0;
    bool inside = true, in_pad = true;
    for (size_t a = 0; a < 3; ++a) {
      const DimGeometry& dd = d[a];
      int64_t start = oc[a] * dd.stride - dd.pad_lo;
      // The window start one element late, `o*s - lo + 1` (a 1-based index left in), in
      // the case's own dims (as_3d's leading unit dims are not the kernel's).
      if (bug == Bug::kAvgWindowOffByOne && a >= 3 - static_cast<size_t>(g.spatial.rank())) start += 1;
      // pad_lo left out of the start (the padding only sizes the output): every window one
      // pad_lo too far right, and the windows at the low edge never see padding.
      if (bug == Bug::kAvgIgnoresPadLo) start += dd.pad_lo;
      const int64_t i = start + kk[a];
      inside = inside && i >= 0 && i < dd.in;
      in_pad = in_pad && i >= -dd.pad_lo && i < dd.in + dd.pad_hi;
      flat = flat * dd.in + i;
    }
    if (inside) w.taps.push_back(flat);
    w.padded += in_pad;
  }
  return w;
}

// The forward's divisor of a window.
double divisor_of(Bug bug, const AvgPoolGeometry& g, const AvgWindow& w);

// A window's count kept in a uint8: 256 taps divide by 0, 257 by 1.
double avg_divisor(Bug bug, const AvgPoolGeometry& g, const AvgWindow& w) {
  const double d = divisor_of(bug, g, w);
  return bug == Bug::kAvgDivisorU8 ? static_cast<double>(static_cast<int64_t>(d) & 0xff) : d;
}

double divisor_of(Bug bug, const AvgPoolGeometry& g, const AvgWindow& w) {
  // The divisor field not read: every window divides by its own count.
  if (g.divisor > 0 && bug != Bug::kAvgDivisorIgnored) return static_cast<double>(g.divisor);
  // count_include_pad read with the opposite sense (a flag named exclude_pad upstream).
  const bool count_pad = g.count_include_pad != (bug == Bug::kAvgCountPadInverted);
  const auto inside = static_cast<int64_t>(w.taps.size());
  // The count clipped to the input, with the padding added back only to windows that hold
  // input (a kernel that derives the padded count from the clipped one): a window wholly
  // in the padding divides its sum of 0 by 0, NaN.
  if (bug == Bug::kAvgEmptyWindowNan && inside == 0) return 0.0;
  if (!count_pad) return static_cast<double>(inside);
  // The whole kernel counted, as if the padding extended to the end of a ceil-mode
  // window: its overhang past the padding divides too (PyTorch never counts it).
  if (bug == Bug::kAvgCeilOverhangCounted) return static_cast<double>(w.kernel);
  return static_cast<double>(w.padded);
}

}  // namespace

bool is_avgpool_trap(Bug bug) {
  switch (bug) {
    case Bug::kAvgCountPadInverted:
    case Bug::kAvgCeilOverhangCounted:
    case Bug::kAvgEmptyWindowNan:
    case Bug::kAvgEmptyWindowUnwritten:
    case Bug::kAvgWindowOffByOne:
    case Bug::kAvgIgnoresPadLo:
    case Bug::kAvgDivisorIgnored:
    case Bug::kAvgDxUndivided:
    case Bug::kAvgDxKernelDivisor:
    case Bug::kAvgDxRace:
    case Bug::kAvgDivisorU8:
      return true;
    default:
      return false;
  }
}

bool runs_max_pool_cases_only(Bug bug) {
  switch (bug) {
    case Bug::kPoolLastTie:
    case Bug::kPoolTieMask:
    case Bug::kPoolOverlapOverwrites:
    case Bug::kPoolAtomicDx:
    case Bug::kPoolPadZero:
    case Bug::kPoolIgnoresNan:
    case Bug::kPoolIndexMinusOne:
    case Bug::kPoolMinusInfKeepsFirst:
    case Bug::kPoolCeilExtraWindow:
    case Bug::kPoolIndexWithBatch:
      return true;
    default:
      return false;
  }
}

Status trap_avgpool_forward(Bug bug, const AvgPoolGeometry& g, const Tensor& x, Tensor& y) {
  const int64_t planes = g.batch * g.channels, in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  for (int64_t o = 0; o < out_count; ++o) {
    const AvgWindow w = avg_window(bug, g, o);
    // Nothing to sum, so nothing written: a window wholly in the padding keeps whatever
    // the buffer held (its y should be 0 / divisor = 0).
    if (bug == Bug::kAvgEmptyWindowUnwritten && w.taps.empty()) continue;
    const double divisor = avg_divisor(bug, g, w);
    for (int64_t pl = 0; pl < planes; ++pl) {
      const double* plane = &x.data[static_cast<size_t>(pl * in_count)];
      double sum = 0.0;
      for (int64_t t : w.taps) sum += plane[t];
      y.data[static_cast<size_t>(pl * out_count + o)] = round_to(y.dtype, sum / divisor);
    }
  }
  return ok_status();
}

Status trap_avgpool_backward(Bug bug, const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) {
  const int64_t planes = g.batch * g.channels, in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  std::vector<double> acc(dx.data.size(), 0.0);
  // A scatter with atomicAdd in f32 (f64 in f64): overlapping windows add their shares
  // into one dx element in the order their threads happen to run, so the last bits of
  // dx change from run to run. A correct kernel gathers in a fixed order.
  std::vector<int64_t> order(static_cast<size_t>(out_count));
  std::iota(order.begin(), order.end(), int64_t{0});
  const DType atomic_dtype = dx.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  if (bug == Bug::kAvgDxRace) std::shuffle(order.begin(), order.end(), std::mt19937_64(race_call()));
  for (int64_t o : order) {
    const AvgWindow w = avg_window(bug, g, o);
    double divisor = avg_divisor(bug, g, w);
    if (bug == Bug::kAvgDxUndivided) divisor = 1.0;  // dy spread over the window as it is
    // The backward divides by the kernel's size whatever the forward's rule (a backward
    // written for count_include_pad, ceil_mode off and no divisor).
    if (bug == Bug::kAvgDxKernelDivisor) divisor = static_cast<double>(w.kernel);
    for (int64_t pl = 0; pl < planes; ++pl) {
      const double share = dy.data[static_cast<size_t>(pl * out_count + o)] / divisor;
      for (int64_t t : w.taps) {
        double& v = acc[static_cast<size_t>(pl * in_count + t)];
        v += share;
        if (bug == Bug::kAvgDxRace) v = round_to(atomic_dtype, v);
      }
    }
  }
  for (size_t i = 0; i < acc.size(); ++i) dx.data[i] = round_to(dx.dtype, acc[i]);
  return ok_status();
}

}  // namespace kc::traps
