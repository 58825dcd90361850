// The shape contract (docs/ops.md, "Convolution", "Max pooling", "Average pooling"):
// output extents, resolution of padding forms, and the resolved geometry of conv,
// max-pool and average-pool cases.
//
//   out = floor((in + lo + hi - d*(k-1) - 1) / s) + 1                 (conv, pool)
//   ceil_mode (pool): ceil instead of floor, then a last window that would start at or
//                     beyond in + lo (entirely in the right padding) is dropped.
//   SAME: out = ceil(in / s), total = max((out-1)*s + d*(k-1) + 1 - in, 0);
//         same puts floor(total/2) on lo, same_lower puts it on hi.
//
// Geometry is resolved only from a validated case (see validate.h), so every extent
// here is >= 1 and every product fits comfortably in int64.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kc/case.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

struct DimGeometry {
  int64_t in = 1;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_lo = 0;
  int64_t pad_hi = 0;
  int64_t out = 1;
  int64_t extent() const { return dilation * (kernel - 1) + 1; }  // window span
  int64_t padded() const { return in + pad_lo + pad_hi; }
  bool operator==(const DimGeometry&) const = default;
};

// Per spatial dim, outermost first. as_3d() prepends unit dims so that code can loop
// over exactly three spatial dims whatever the rank.
struct SpatialGeometry {
  std::vector<DimGeometry> dims;
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t in_count() const;      // product of in
  int64_t out_count() const;     // product of out
  int64_t kernel_count() const;  // product of kernel
  int64_t padded_count() const;  // product of padded()
  Dims in_dims() const;
  Dims out_dims() const;
  Dims kernel_dims() const;
  std::array<DimGeometry, 3> as_3d() const;
};

struct ConvGeometry {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t groups = 1;
  SpatialGeometry spatial;
  PaddingMode mode = PaddingMode::kZeros;
  bool bias = false;

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  Dims x_shape() const;  // [N, Cin, in...]
  Dims w_shape() const;  // [Cout, Cin/G, k...]
  Dims b_shape() const;  // [Cout]
  Dims y_shape() const;  // [N, Cout, out...]
  int64_t reduction_length() const { return in_per_group() * spatial.kernel_count(); }
};

struct PoolGeometry {
  int64_t batch = 1;
  int64_t channels = 1;
  SpatialGeometry spatial;
  bool ceil_mode = false;
  PoolMode mode = PoolMode::kTraining;
  TieRule tie = TieRule::kFirst;

  Dims x_shape() const;  // [N, C, in...]
  Dims y_shape() const;  // [N, C, out...]
};

// Average pooling (dilation 1). divisor 0: each window's own divisor, by
// count_include_pad: its extent clipped to [-lo, in + hi) (true) or to [0, in) (false).
struct AvgPoolGeometry {
  int64_t batch = 1;
  int64_t channels = 1;
  SpatialGeometry spatial;
  bool ceil_mode = false;
  bool count_include_pad = true;
  int64_t divisor = 0;

  Dims x_shape() const;  // [N, C, in...]
  Dims y_shape() const;  // [N, C, out...]
};

// floor((in + lo + hi - extent) / s) + 1, or the ceil_mode variant with the drop rule.
// May return <= 0 (an empty output); callers decide whether that is an error.
int64_t output_extent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_lo, int64_t pad_hi,
                      bool ceil_mode);

// [lo, hi] for TF/ONNX SAME_UPPER (lower == false) or ONNX SAME_LOWER (lower == true).
std::array<int64_t, 2> resolve_same(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, bool lower);

// Per-dim [lo, hi] for a padding spec (explicit, valid, same, same_lower).
std::vector<std::array<int64_t, 2>> resolve_padding(const PadSpec& pad, const Dims& in, const Dims& kernel,
                                                    const Dims& stride, const Dims& dilation);

// Resolved geometry. Both validate the case first and return its error if it is bad.
StatusOr<ConvGeometry> conv_geometry(const Case& c);
StatusOr<PoolGeometry> pool_geometry(const Case& c);
StatusOr<AvgPoolGeometry> avgpool_geometry(const Case& c);

// The largest number of padded positions that copy one input element: 1 for zeros,
// up to pad + 1 per dim for replicate. Bounds how many terms one dx element sums.
int64_t max_pad_copies(const ConvGeometry& g);

// Geometry without validation: for validate() itself, after the field rules passed,
// and for callers holding a case that validate() accepted.
ConvGeometry unchecked_conv_geometry(const Case& c);
PoolGeometry unchecked_pool_geometry(const Case& c);
AvgPoolGeometry unchecked_avgpool_geometry(const Case& c);

}  // namespace kc
