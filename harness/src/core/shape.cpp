// The shape contract every op shares: output extents, padding resolution, a window's
// per-dim geometry. Each op's geometry is built by its module (ops/<op>.cpp).
#include "kc/shape.h"

#include <algorithm>

#include "ops/op_module.h"

namespace kc {

Dims or_ones(const Dims& d, size_t rank) { return d.empty() ? Dims(rank, 1) : d; }

SpatialGeometry build_spatial(const Dims& in, const Dims& kernel, const Dims& stride, const Dims& dilation,
                              const PadSpec& pad, bool ceil_mode) {
  auto pads = resolve_padding(pad, in, kernel, stride, dilation);
  SpatialGeometry g;
  for (size_t i = 0; i < in.size(); ++i) {
    DimGeometry d{in[i], kernel[i], stride[i], dilation[i], pads[i][0], pads[i][1], 0};
    d.out = output_extent(d.in, d.kernel, d.stride, d.dilation, d.pad_lo, d.pad_hi, ceil_mode);
    g.dims.push_back(d);
  }
  return g;
}

namespace {

template <class F>
int64_t product(const std::vector<DimGeometry>& dims, F f) {
  int64_t n = 1;
  for (const auto& d : dims) n *= f(d);
  return n;
}

}  // namespace

int64_t SpatialGeometry::in_count() const {
  return product(dims, [](auto& d) { return d.in; });
}
int64_t SpatialGeometry::out_count() const {
  return product(dims, [](auto& d) { return d.out; });
}
int64_t SpatialGeometry::kernel_count() const {
  return product(dims, [](auto& d) { return d.kernel; });
}
int64_t SpatialGeometry::padded_count() const {
  return product(dims, [](auto& d) { return d.padded(); });
}
Dims SpatialGeometry::in_dims() const {
  Dims r;
  for (const auto& d : dims) r.push_back(d.in);
  return r;
}
Dims SpatialGeometry::out_dims() const {
  Dims r;
  for (const auto& d : dims) r.push_back(d.out);
  return r;
}
Dims SpatialGeometry::kernel_dims() const {
  Dims r;
  for (const auto& d : dims) r.push_back(d.kernel);
  return r;
}
std::array<DimGeometry, 3> SpatialGeometry::as_3d() const {
  std::array<DimGeometry, 3> r{};  // unit dims: in = k = s = d = out = 1, no padding
  const size_t skip = 3 - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) r[skip + i] = dims[i];
  return r;
}

static Dims concat(std::initializer_list<int64_t> head, const Dims& tail) {
  Dims r(head);
  r.insert(r.end(), tail.begin(), tail.end());
  return r;
}

Dims ConvGeometry::x_shape() const { return concat({batch, in_channels}, spatial.in_dims()); }
Dims ConvGeometry::w_shape() const { return concat({out_channels, in_per_group()}, spatial.kernel_dims()); }
Dims ConvGeometry::b_shape() const { return {out_channels}; }
Dims ConvGeometry::y_shape() const { return concat({batch, out_channels}, spatial.out_dims()); }
Dims PoolGeometry::x_shape() const { return concat({batch, channels}, spatial.in_dims()); }
Dims PoolGeometry::y_shape() const { return concat({batch, channels}, spatial.out_dims()); }

int64_t output_extent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_lo, int64_t pad_hi,
                      bool ceil_mode) {
  const int64_t span = in + pad_lo + pad_hi - (dilation * (kernel - 1) + 1);
  // ceil(span / s) + 1 is still 1 for -s < span < 0: one window that overhangs the
  // padded end (as PyTorch computes it); the numerator is >= 0 exactly then.
  const int64_t num = ceil_mode ? span + stride - 1 : span;
  if (num < 0) return 0;
  if (!ceil_mode) return span / stride + 1;
  int64_t out = num / stride + 1;
  // The last window must start inside the input or the left padding.
  if ((out - 1) * stride >= in + pad_lo) --out;
  return out;
}

std::array<int64_t, 2> resolve_same(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, bool lower) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + dilation * (kernel - 1) + 1 - in, 0);
  const int64_t small = total / 2;
  return lower ? std::array<int64_t, 2>{total - small, small} : std::array<int64_t, 2>{small, total - small};
}

std::vector<std::array<int64_t, 2>> resolve_padding(const PadSpec& pad, const Dims& in, const Dims& kernel,
                                                    const Dims& stride, const Dims& dilation) {
  std::vector<std::array<int64_t, 2>> r(in.size(), {0, 0});
  if (pad.kind == PadKind::kExplicit) {
    for (size_t i = 0; i < in.size() && i < pad.pairs.size(); ++i) r[i] = pad.pairs[i];
  } else if (pad.kind != PadKind::kValid) {
    for (size_t i = 0; i < in.size(); ++i) {
      r[i] = resolve_same(in[i], kernel[i], stride[i], dilation[i], pad.kind == PadKind::kSameLower);
    }
  }
  return r;
}

int64_t max_pad_copies(const ConvGeometry& g) {
  int64_t total = 1;
  for (const DimGeometry& d : g.spatial.dims) {
    std::vector<int64_t> count(static_cast<size_t>(d.in), 0);
    for (int64_t p = 0; p < d.padded(); ++p) {
      int64_t i = p - d.pad_lo;
      if (i < 0 || i >= d.in) {
        if (g.mode == PaddingMode::kZeros) continue;
        if (g.mode == PaddingMode::kReplicate) i = i < 0 ? 0 : d.in - 1;
        if (g.mode == PaddingMode::kReflect) i = i < 0 ? -i : 2 * (d.in - 1) - i;
        if (g.mode == PaddingMode::kCircular) i = ((i % d.in) + d.in) % d.in;
      }
      count[static_cast<size_t>(i)]++;
    }
    total *= *std::max_element(count.begin(), count.end());
  }
  return total;
}

}  // namespace kc
