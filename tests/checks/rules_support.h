// Cases and planted-bug backends shared by the rule-check tests (argmax, padding,
// determinism, integrity): each backend overrides one method of test::DelegatingBackend
// to plant one bug its check must name. Test-only; header-only.
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "checks/checks.h"
#include "core/fill.h"
#include "kc/runner.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"
#include "support/run_check.h"

namespace kc::rules_test {

using namespace kc;
using test::ConvSpec;
using test::DelegatingBackend;
using test::expect_check;
using test::explicit_pad;
using test::pad_kind;
using test::pool_case;
using test::PoolSpec;
using test::run_check;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- cases -------------------------------------------------------------------------

inline Case with_fill(Case c, Fill fill, uint64_t seed = 3) {
  c.data = DataSpec{seed, fill};
  return c;
}

inline std::vector<Case> good_pool_cases() {
  std::vector<Case> cases;
  cases.push_back(pool_case({.spatial = {9}, .kernel = {3}, .stride = {2}, .pads = {{1, 1}}}));
  cases.push_back(pool_case({.batch = 2,
                             .channels = 3,
                             .spatial = {7, 6},
                             .kernel = {3, 3},
                             .stride = {1, 1},
                             .pads = {{1, 1}, {1, 1}},
                             .fill = Fill::kTies}));
  cases.push_back(pool_case({.spatial = {4, 5, 5}, .kernel = {2, 2, 2}, .stride = {1, 1, 1}, .fill = Fill::kSpecial}));
  cases.push_back(pool_case({.channels = 2,
                             .spatial = {8, 7},
                             .kernel = {3, 3},
                             .stride = {2, 2},
                             .pads = {{1, 1}, {0, 1}},
                             .ceil_mode = true,
                             .fill = Fill::kSpecial}));
  cases.push_back(pool_case({.spatial = {9, 9},
                             .kernel = {3, 2},
                             .stride = {1, 2},
                             .dilation = {2, 1},
                             .pads = {{2, 2}, {1, 0}},
                             .tie = TieRule::kLast,
                             .fill = Fill::kTies}));
  cases.push_back(pool_case({.spatial = {6, 6},
                             .kernel = {2, 2},
                             .stride = {1, 1},
                             .tie = TieRule::kAny,
                             .fill = Fill::kTies,
                             .dtype = DType::kF16}));
  cases.push_back(pool_case({.batch = 2,
                             .spatial = {6, 5},
                             .kernel = {3, 3},
                             .stride = {2, 2},
                             .pads = {{1, 1}, {1, 1}},
                             .mode = PoolMode::kInference,
                             .fill = Fill::kSpecial}));
  cases.push_back(pool_case({.spatial = {10},
                             .kernel = {4},
                             .stride = {3},
                             .pads = {{2, 2}},
                             .ceil_mode = true,
                             .fill = Fill::kInteger,
                             .dtype = DType::kF32}));
  return cases;
}

inline std::vector<Case> good_conv_cases() {
  std::vector<Case> cases;
  cases.push_back(with_fill(test::conv_case({.channels = 2,
                                             .out_channels = 3,
                                             .spatial = {11},
                                             .kernel = {3},
                                             .padding = pad_kind(PadKind::kSame),
                                             .mode = PaddingMode::kReflect}),
                            Fill::kRandom));
  cases.push_back(with_fill(test::conv_case({.batch = 2,
                                             .channels = 2,
                                             .out_channels = 2,
                                             .spatial = {7, 6},
                                             .kernel = {3, 2},
                                             .stride = {2, 1},
                                             .padding = explicit_pad({{2, 1}, {1, 1}}),
                                             .mode = PaddingMode::kReplicate,
                                             .bias = true}),
                            Fill::kNormal));
  cases.push_back(with_fill(test::conv_case({.channels = 2,
                                             .out_channels = 2,
                                             .groups = 2,
                                             .spatial = {6, 7},
                                             .kernel = {3, 3},
                                             .dilation = {2, 1},
                                             .padding = explicit_pad({{2, 2}, {1, 3}}),
                                             .mode = PaddingMode::kCircular,
                                             .dtype = DType::kF32}),
                            Fill::kRandom));
  cases.push_back(with_fill(test::conv_case({.channels = 1,
                                             .out_channels = 2,
                                             .spatial = {4, 5, 5},
                                             .kernel = {2, 3, 3},
                                             .padding = pad_kind(PadKind::kSameLower),
                                             .bias = true}),
                            Fill::kSpecial));
  cases.push_back(with_fill(test::conv_case({.channels = 2,
                                             .out_channels = 2,
                                             .spatial = {8, 8},
                                             .kernel = {3, 3},
                                             .stride = {2, 2},
                                             .padding = explicit_pad({{1, 1}, {1, 1}}),
                                             .dtype = DType::kF32}),
                            Fill::kInteger));
  Case fused = test::conv_case({.channels = 2,
                                .out_channels = 2,
                                .spatial = {6, 6},
                                .kernel = {3, 3},
                                .padding = pad_kind(PadKind::kSame),
                                .mode = PaddingMode::kReflect});
  fused.op = ConvBiasReluParams{std::get<ConvParams>(fused.op)};
  cases.push_back(with_fill(fused, Fill::kRandom));
  cases.back().tolerance = Tolerance{ToleranceKind::kExplicit, 1e-12, 1e-12};
  return cases;
}

// Every conv and pool case the rule checks pass on with a correct backend.
inline std::vector<Case> good_cases() {
  std::vector<Case> cases = good_conv_cases();
  for (const Case& c : good_pool_cases()) cases.push_back(c);
  return cases;
}

// ---- planted-bug backends ------------------------------------------------------------

class PassThrough : public DelegatingBackend {
 public:
  PassThrough() : DelegatingBackend("pass-through") {}
};

// Pads a 2-D [N, C, H, W] tensor by the geometry's pads: with `fill`, or mirrored with
// the edge repeated (the wrong reflect) when symmetric.
inline Tensor pad2d(const Tensor& x, const SpatialGeometry& sg, double fill, bool symmetric) {
  const DimGeometry &h = sg.dims[0], &w = sg.dims[1];
  Tensor xp = Tensor::filled(x.dtype, {x.shape[0], x.shape[1], h.padded(), w.padded()}, fill);
  auto src = [&](int64_t p, const DimGeometry& d) {
    int64_t i = p - d.pad_lo;
    if (symmetric) i = i < 0 ? -i - 1 : i >= d.in ? 2 * d.in - 1 - i : i;
    return i;
  };
  for (int64_t pl = 0; pl < x.shape[0] * x.shape[1]; ++pl) {
    for (int64_t ph = 0; ph < h.padded(); ++ph) {
      for (int64_t pw = 0; pw < w.padded(); ++pw) {
        const int64_t ih = src(ph, h), iw = src(pw, w);
        if (ih < 0 || ih >= h.in || iw < 0 || iw >= w.in) continue;
        xp[(pl * h.padded() + ph) * w.padded() + pw] = x[(pl * h.in + ih) * w.in + iw];
      }
    }
  }
  return xp;
}

// The geometry of the same op on an input already padded: pads folded into `in`.
template <class G>
inline G unpadded(G g) {
  for (DimGeometry& d : g.spatial.dims) {
    d.in = d.padded();
    d.pad_lo = d.pad_hi = 0;
  }
  return g;
}

// Reflect padding that repeats the edge element (PyTorch's "symmetric" is not reflect).
class ReflectRepeatsEdge : public DelegatingBackend {
 public:
  ReflectRepeatsEdge() : DelegatingBackend("reflect-repeats-edge") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (g.mode != PaddingMode::kReflect) return reference().conv_forward(g, x, w, b, relu, y);
    ConvGeometry gv = unpadded(g);
    gv.mode = PaddingMode::kZeros;
    return reference().conv_forward(gv, pad2d(x, g.spatial, 0.0, true), w, b, relu, y);
  }
};

// Applies other pads than the geometry's (outputs unchanged): `repad` rewrites them.
class RepadsConv : public DelegatingBackend {
 public:
  RepadsConv(std::string name, std::function<void(SpatialGeometry&)> repad)
      : DelegatingBackend(std::move(name)), repad_(std::move(repad)) {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    ConvGeometry alt = g;
    repad_(alt.spatial);
    return reference().conv_forward(alt, x, w, b, relu, y);
  }

 private:
  std::function<void(SpatialGeometry&)> repad_;
};

// Computes a valid convolution (stride 1) and writes it into the interior of y: the
// border of a SAME output stays as poisoned.
class ValidForSame : public DelegatingBackend {
 public:
  ValidForSame() : DelegatingBackend("valid-for-same") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    ConvGeometry gv = g;
    for (DimGeometry& d : gv.spatial.dims) {
      d.pad_lo = d.pad_hi = 0;
      d.out = d.in - d.extent() + 1;
    }
    Tensor yv = Tensor::zeros(y.dtype, gv.y_shape());
    KC_RETURN_IF_ERROR(reference().conv_forward(gv, x, w, b, relu, yv));
    const DimGeometry &h = g.spatial.dims[0], &wd = g.spatial.dims[1], &vh = gv.spatial.dims[0],
                      &vw = gv.spatial.dims[1];
    for (int64_t pl = 0; pl < g.batch * g.out_channels; ++pl) {
      for (int64_t oh = 0; oh < vh.out; ++oh) {
        for (int64_t ow = 0; ow < vw.out; ++ow) {
          y[(pl * h.out + oh + h.pad_lo) * wd.out + ow + wd.pad_lo] = yv[(pl * vh.out + oh) * vw.out + ow];
        }
      }
    }
    return ok_status();
  }
};

// An off-by-one loop bound: the last output column is never written.
class SkipsLastColumn : public DelegatingBackend {
 public:
  SkipsLastColumn() : DelegatingBackend("skips-last-column") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    Tensor full = y;
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, full));
    const int64_t wo = g.spatial.dims.back().out;
    for (int64_t i = 0; i < y.size(); ++i) {
      if (i % wo != wo - 1) y[i] = full[i];
    }
    return ok_status();
  }
};

// dx of the first and last input rows is dropped (a kernel that skips the border).
struct DropsBorderRowsOfDx : test::EditedConvBackward {
  DropsBorderRowsOfDx()
      : EditedConvBackward("drops-border-rows", [](const ConvGeometry& g, const Tensor&, Tensor& dx, Tensor&, Tensor*) {
          const int64_t h = g.spatial.dims[0].in, wi = g.spatial.dims[1].in;
          for (int64_t i = 0; i < dx.size(); ++i) {
            const int64_t row = (i / wi) % h;
            if (row == 0 || row == h - 1) dx[i] = 0.0;
          }
        }) {}
};

class WritesIntoInput : public DelegatingBackend {
 public:
  WritesIntoInput() : DelegatingBackend("writes-into-input") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    const_cast<Tensor&>(x)[1] += 1.0;  // e.g. an in-place pre-scaling of the input
    return reference().conv_forward(g, x, w, b, relu, y);
  }
};

// Every other call perturbs three dw elements by a last-bit amount: a racy reduction.
class RacyWeightGradient : public DelegatingBackend {
 public:
  RacyWeightGradient() : DelegatingBackend("racy-dw") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (calls_++ % 2 == 1) {
      for (int64_t i = 0; i < 3 && i < dw.size(); ++i) dw[i] = std::nextafter(dw[i], kInf);
    }
    return ok_status();
  }

 private:
  int calls_ = 0;
};

struct ResizesOutput : test::EditedConvForward {
  ResizesOutput()
      : EditedConvForward("resizes-output", [](const ConvGeometry&, Tensor& y) { y.data.resize(y.data.size() - 2); }) {}
};

// A flat loop bounded by `i <= n`: y is right, and one element lands past its end.
struct WritesPastTheEnd : test::EditedConvForward {
  WritesPastTheEnd()
      : EditedConvForward("writes-past-the-end", [](const ConvGeometry&, Tensor& y) {
          y.data.data()[y.size()] = 0.0;  // into the guard band, which the allocation owns
        }) {}
};

// Overruns y, then hands back a fresh buffer of the right values in its place (so the
// damaged one is freed unseen).
struct ReplacesOutputBuffer : test::EditedConvForward {
  ReplacesOutputBuffer()
      : EditedConvForward("replaces-output-buffer", [](const ConvGeometry&, Tensor& y) {
          y.data.data()[y.size()] = 0.0;
          HostVector<double> fresh(y.data.begin(), y.data.end());
          y.data = std::move(fresh);
        }) {}
};

// Writes past the end of y on its second call only (a race that overruns now and then).
class OverrunsOnTheSecondCall : public DelegatingBackend {
 public:
  OverrunsOnTheSecondCall() : DelegatingBackend("overruns-on-the-second-call") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    if (calls_++ == 1) y.data.data()[y.size() + 1] = 0.0;
    return ok_status();
  }

 private:
  int calls_ = 0;
};

// A max-pool backward whose index arithmetic is off by one plane: it zeroes one element
// before dx (dx itself is right).
class PoolWritesBeforeStart : public DelegatingBackend {
 public:
  PoolWritesBeforeStart() : DelegatingBackend("pool-writes-before-start") {}
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    KC_RETURN_IF_ERROR(reference().maxpool_backward(g, dy, indices, dx));
    dx.data.data()[-1] = 0.0;
    return ok_status();
  }
};

// Training mode behaving as inference: no indices written, zero gradient returned.
class PoolKeepsNoIndices : public DelegatingBackend {
 public:
  PoolKeepsNoIndices() : DelegatingBackend("pool-keeps-no-indices") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor*) override {
    return reference().maxpool_forward(g, x, y, nullptr);
  }
  Status maxpool_backward(const PoolGeometry&, const Tensor&, const IndexTensor*, Tensor& dx) override {
    for (double& v : dx.data) v = 0.0;
    return ok_status();
  }
};

// A max pool that breaks ties by its own rule, whatever the case asks for.
class PoolWithTie : public DelegatingBackend {
 public:
  explicit PoolWithTie(TieRule rule)
      : DelegatingBackend(rule == TieRule::kLast ? "pool-tie-last" : "pool-tie-first"), rule_(rule) {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    PoolGeometry own = g;
    own.tie = rule_;
    return reference().maxpool_forward(own, x, y, indices);
  }

 private:
  TieRule rule_;
};

// Backward with dx[index] = dy instead of +=.
class PoolOverwrites : public DelegatingBackend {
 public:
  PoolOverwrites() : DelegatingBackend("pool-overwrites") {}
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices == nullptr) return failed_precondition("no indices");
    const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
    for (double& v : dx.data) v = 0.0;
    for (int64_t w = 0; w < dy.size(); ++w) dx[(w / out) * in + indices->data[static_cast<size_t>(w)]] = dy[w];
    return ok_status();
  }
};

// Backward that adds in the storage dtype, rounding after every add (a 16-bit
// accumulator; overwrite = true: `=` where it must add, also rounded).
class PoolSumsInStorage : public DelegatingBackend {
 public:
  explicit PoolSumsInStorage(bool overwrite = false, bool reverse = false)
      : DelegatingBackend("pool-sums-in-storage"), overwrite_(overwrite), reverse_(reverse) {}
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices == nullptr) return failed_precondition("no indices");
    const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
    for (double& v : dx.data) v = 0.0;
    for (int64_t k = 0; k < dy.size(); ++k) {
      const int64_t w = reverse_ ? dy.size() - 1 - k : k;
      double& t = dx[(w / out) * in + indices->data[static_cast<size_t>(w)]];
      t = round_to(dx.dtype, overwrite_ ? dy[w] : t + dy[w]);
    }
    return ok_status();
  }

 private:
  bool overwrite_;
  bool reverse_;
};

// Pads with 0 instead of -inf (2-D, floor mode).
class PoolPadsZero : public DelegatingBackend {
 public:
  PoolPadsZero() : DelegatingBackend("pool-pads-zero") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    const PoolGeometry gz = unpadded(g);
    IndexTensor iz{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(y.size()), 0)};
    KC_RETURN_IF_ERROR(reference().maxpool_forward(gz, pad2d(x, g.spatial, 0.0, false), y, indices ? &iz : nullptr));
    if (indices == nullptr) return ok_status();
    const DimGeometry &h = g.spatial.dims[0], &w = g.spatial.dims[1];
    for (size_t i = 0; i < iz.data.size(); ++i) {  // back to the unpadded plane, pads included
      indices->data[i] = (iz.data[i] / w.padded() - h.pad_lo) * w.in + iz.data[i] % w.padded() - w.pad_lo;
    }
    return ok_status();
  }
};

// max with `>` only: a NaN never wins.
class PoolIgnoresNaN : public DelegatingBackend {
 public:
  PoolIgnoresNaN() : DelegatingBackend("pool-ignores-nan") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    Tensor no_nan = x;
    for (double& v : no_nan.data) v = std::isnan(v) ? -kInf : v;
    return reference().maxpool_forward(g, no_nan, y, indices);
  }
};

class PoolMinusOneForAllMinusInf : public DelegatingBackend {
 public:
  PoolMinusOneForAllMinusInf() : DelegatingBackend("pool-minus-one") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    KC_RETURN_IF_ERROR(reference().maxpool_forward(g, x, y, indices));
    for (int64_t w = 0; indices && w < y.size(); ++w) {
      if (y[w] == -kInf) indices->data[static_cast<size_t>(w)] = -1;
    }
    return ok_status();
  }
};

// Indices into the whole tensor: the (n, c) plane offset is added.
class PoolBatchOffset : public DelegatingBackend {
 public:
  PoolBatchOffset() : DelegatingBackend("pool-batch-offset") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    KC_RETURN_IF_ERROR(reference().maxpool_forward(g, x, y, indices));
    const int64_t in = g.spatial.in_count(), out = g.spatial.out_count();
    for (size_t w = 0; indices && w < indices->data.size(); ++w) indices->data[w] += static_cast<int64_t>(w) / out * in;
    return ok_status();
  }
};

class PoolBackwardWithoutIndicesIsZero : public DelegatingBackend {
 public:
  PoolBackwardWithoutIndicesIsZero() : DelegatingBackend("pool-zero-backward") {}
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices != nullptr) return reference().maxpool_backward(g, dy, indices, dx);
    for (double& v : dx.data) v = 0.0;
    return ok_status();
  }
};

inline bool any_nan(const Tensor& t) {
  for (double v : t.data) {
    if (std::isnan(v)) return true;
  }
  return false;
}

inline OpInputs inputs_of(const Case& c) {
  auto in = make_inputs(c);
  EXPECT_TRUE(in.ok()) << in.status().to_string();
  return in.ok() ? *in : OpInputs{};
}

}  // namespace kc::rules_test
