// The implicit-GEMM view of a convolution (docs/ops.md, "Convolution"), shared by the CUDA kernels
// and their CPU unit tests. Every rank is normalised to three spatial dims (unit outer
// dims), layout N C D H W, weights [Cout, Cin/G, kD, kH, kW].
//
// Per group g the three passes (forward, backward-data, backward-weight) are GEMMs
// C[M, N] = sum_k A[m, k] * B[k, n] whose A and B are gathered by index functions: each
// returns the flat element of its source tensor, or -1 for a zero (padding, a stride
// hole, a tap outside the input). Invariant: every tensor of a supported case has fewer
// than 2^31 elements (supports() refuses larger ones), so all flat indices fit in int.
// The three GEMMs: docs/notes.md, section gpu/include/kc/gpu/conv_shape.h.
#pragma once

#include "kc/gpu/hd.h"

namespace kc {
struct ConvGeometry;
}

namespace kc::gpu {

// Row-major unflatten of `flat` over three extents.
KC_HD void unflatten3(int flat, const int ext[3], int c[3]) {
  c[2] = flat % ext[2];
  flat /= ext[2];
  c[1] = flat % ext[1];
  c[0] = flat / ext[1];
}

// The sliding-window geometry conv and max pool share: per dim (three, unit outer dims
// for lower ranks) the input and output extents, kernel, stride, dilation and low
// padding (the high padding is implied by out: taps past `in` are padding).
struct WindowShape {
  int in[3] = {1, 1, 1};
  int out[3] = {1, 1, 1};
  int kernel[3] = {1, 1, 1};
  int stride[3] = {1, 1, 1};
  int dilation[3] = {1, 1, 1};
  int pad_lo[3] = {0, 0, 0};

  KC_HD int in_count() const { return in[0] * in[1] * in[2]; }
  KC_HD int out_count() const { return out[0] * out[1] * out[2]; }
  KC_HD int kernel_count() const { return kernel[0] * kernel[1] * kernel[2]; }

  // Flat input position of output o (per-dim coords) at kernel tap k, or -1 (padding).
  KC_HD int tap(const int o[3], const int k[3]) const {
    int flat = 0;
    for (int d = 0; d < 3; ++d) {
      const int i = o[d] * stride[d] + k[d] * dilation[d] - pad_lo[d];
      if (i < 0 || i >= in[d]) return -1;
      flat = flat * in[d] + i;
    }
    return flat;
  }
};

struct ConvShape : WindowShape {
  int batch = 1;
  int in_channels = 1;
  int out_channels = 1;
  int groups = 1;

  KC_HD int cin_g() const { return in_channels / groups; }
  KC_HD int cout_g() const { return out_channels / groups; }
  KC_HD int x_size() const { return batch * in_channels * in_count(); }
  KC_HD int y_size() const { return batch * out_channels * out_count(); }
  KC_HD int w_size() const { return out_channels * cin_g() * kernel_count(); }

  // Flat output position whose window puts kernel tap k on input i, or -1.
  KC_HD int tap_source(const int i[3], const int k[3]) const {
    int flat = 0;
    for (int d = 0; d < 3; ++d) {
      const int t = i[d] + pad_lo[d] - k[d] * dilation[d];
      if (t < 0 || t % stride[d] != 0 || t / stride[d] >= out[d]) return -1;
      flat = flat * out[d] + t / stride[d];
    }
    return flat;
  }
};

// The geometry as the kernels see it. With `prepadded` the input is the explicitly
// padded tensor (non-zero padding modes): in = padded extents, pad_lo = 0, same out.
ConvShape conv_shape(const ConvGeometry& g, bool prepadded);

// Forward: y = x (*) w.  kAMajorM/kBMajorK say which GEMM index runs along contiguous
// memory, so that tile loads are coalesced.
struct ForwardMap {
  ConvShape s;
  static constexpr bool kAMajorM = true;  // consecutive m: consecutive output positions
  static constexpr bool kBMajorK = true;  // consecutive k: consecutive weights
  KC_HD int m_size() const { return s.batch * s.out_count(); }
  KC_HD int n_size() const { return s.cout_g(); }
  KC_HD int k_size() const { return s.cin_g() * s.kernel_count(); }
  KC_HD int a_index(int g, int m, int k) const {
    const int n = m / s.out_count(), ci = k / s.kernel_count();
    int o[3], kk[3];
    unflatten3(m - n * s.out_count(), s.out, o);
    unflatten3(k - ci * s.kernel_count(), s.kernel, kk);
    const int i = s.tap(o, kk);
    return i < 0 ? -1 : (n * s.in_channels + g * s.cin_g() + ci) * s.in_count() + i;
  }
  KC_HD int b_index(int g, int k, int n) const { return (g * s.cout_g() + n) * k_size() + k; }
  KC_HD int c_index(int g, int m, int n) const {
    const int b = m / s.out_count();
    return (b * s.out_channels + g * s.cout_g() + n) * s.out_count() + (m - b * s.out_count());
  }
  KC_HD int c_channel(int g, int n) const { return g * s.cout_g() + n; }  // for the bias
};

// Backward-data: dx = dy (*)^T w, as a gather over the outputs that saw each input.
struct BackwardDataMap {
  ConvShape s;
  static constexpr bool kAMajorM = true;  // consecutive m: consecutive input positions
  static constexpr bool kBMajorK = true;  // consecutive k: consecutive kernel taps
  KC_HD int m_size() const { return s.batch * s.in_count(); }
  KC_HD int n_size() const { return s.cin_g(); }
  KC_HD int k_size() const { return s.cout_g() * s.kernel_count(); }
  KC_HD int a_index(int g, int m, int k) const {
    const int n = m / s.in_count(), co = k / s.kernel_count();
    int i[3], kk[3];
    unflatten3(m - n * s.in_count(), s.in, i);
    unflatten3(k - co * s.kernel_count(), s.kernel, kk);
    const int o = s.tap_source(i, kk);
    return o < 0 ? -1 : (n * s.out_channels + g * s.cout_g() + co) * s.out_count() + o;
  }
  KC_HD int b_index(int g, int k, int n) const {
    const int co = k / s.kernel_count();
    return ((g * s.cout_g() + co) * s.cin_g() + n) * s.kernel_count() + (k - co * s.kernel_count());
  }
  KC_HD int c_index(int g, int m, int n) const {
    const int b = m / s.in_count();
    return (b * s.in_channels + g * s.cin_g() + n) * s.in_count() + (m - b * s.in_count());
  }
};

// Backward-weight: dw = sum over batch and output positions of dy * x-window: the
// weight-share accumulation, a long K that the launch splits (gemm_plan.h).
struct BackwardWeightMap {
  ConvShape s;
  static constexpr bool kAMajorM = false;  // consecutive k: consecutive output positions
  static constexpr bool kBMajorK = true;
  KC_HD int m_size() const { return s.cout_g(); }
  KC_HD int n_size() const { return s.cin_g() * s.kernel_count(); }
  KC_HD int k_size() const { return s.batch * s.out_count(); }
  KC_HD int a_index(int g, int m, int k) const {
    const int b = k / s.out_count();
    return (b * s.out_channels + g * s.cout_g() + m) * s.out_count() + (k - b * s.out_count());
  }
  KC_HD int b_index(int g, int k, int n) const {
    const int b = k / s.out_count(), ci = n / s.kernel_count();
    int o[3], kk[3];
    unflatten3(k - b * s.out_count(), s.out, o);
    unflatten3(n - ci * s.kernel_count(), s.kernel, kk);
    const int i = s.tap(o, kk);
    return i < 0 ? -1 : (b * s.in_channels + g * s.cin_g() + ci) * s.in_count() + i;
  }
  KC_HD int c_index(int g, int m, int n) const { return (g * s.cout_g() + m) * n_size() + n; }
};

}  // namespace kc::gpu
