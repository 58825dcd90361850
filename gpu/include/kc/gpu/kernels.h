// Launch wrappers: the host-callable face of the CUDA kernels, one op per .cu file.
// Pointers are device pointers in the storage dtype (f32, f16 or bf16), layout
// N C D H W, sizes as the shape structs say; no CUDA type appears here. Launches go to
// the caller's StreamScope (stream.h; else the default stream) and return as soon as
// they are queued; a Status that is not ok is
// a launch error (or an earlier asynchronous fault surfacing), never a numerical one.
// f64 has no kernels: every wrapper refuses it with unimplemented.
#pragma once

#include <cstdint>

#include "kc/dtype.h"
#include "kc/gpu/conv_shape.h"
#include "kc/gpu/layout_map.h"
#include "kc/gpu/pad_map.h"
#include "kc/gpu/pool_shape.h"
#include "kc/status.h"

namespace kc::gpu {

// What the forward GEMM does with z = conv(x, w) + b (b optional, bias may be null):
enum class ConvEpilogue {
  kStore,         // out = z
  kStoreRelu,     // out = relu(z); NaN propagates
  kReluMaskGrad,  // out = z > 0 ? dy : 0: the fused backward's masked cotangent, from a
                  // recomputed z instead of a stored mask (relu'(0) = 0)
};

// conv_forward.cu. dy is read only for kReluMaskGrad.
Status launch_conv_forward(DType dtype, const ConvShape& s, const void* x, const void* w, const void* bias,
                           ConvEpilogue epilogue, const void* dy, void* out);

// conv_backward_data.cu. dx in the storage dtype, or in f32 when dx_f32 (the padded
// gradient that the fold of a non-zero padding mode sums further).
Status launch_conv_backward_data(DType dtype, const ConvShape& s, const void* dy, const void* w, void* dx, bool dx_f32);

// conv_backward_weight.cu. Split-K over batch x output positions (wgrad_plan) into
// `workspace` (wgrad_workspace_floats(s, deterministic) floats), then a reduction into
// dw. deterministic: partials per split, summed in split order (no atomics; bitwise
// repeatable); otherwise the splits add into one f32 buffer atomically.
Status launch_conv_backward_weight(DType dtype, const ConvShape& s, const void* x, const void* dy, bool deterministic,
                                   float* workspace, void* dw);

// conv_backward_bias.cu: db[c] = sum of dy over batch and positions, one block per
// channel, a fixed-order tree: deterministic.
Status launch_conv_backward_bias(DType dtype, const ConvShape& s, const void* dy, void* db);

// pad.cu: xp from x by the padding mode; dx from the f32 padded gradient dxp by summing,
// for each input element, the padded positions that copy it (in ascending order).
Status launch_pad(DType dtype, const PadShape& p, const void* x, void* xp);
Status launch_pad_fold(DType dtype, const PadShape& p, const float* dxp, void* dx);

// layout_convert.cu: channels-first <-> channels-last copies (layout_map.h) for the
// CUTLASS engine's NDHWC activations and KTRSC filters; dst[j] = src[the other index].
Status launch_to_channels_last(DType dtype, const LayoutShape& s, const void* src, void* dst);
Status launch_to_channels_first(DType dtype, const LayoutShape& s, const void* src, void* dst);
// relu_mask.cu: dy (channels-last, K = channels innermost) zeroed in place where the
// pre-activation z (f32, same layout) plus bias[k] (storage dtype, null: none) is not > 0.
Status launch_relu_mask_channels_last(DType dtype, int64_t count, int64_t channels, const float* z, const void* bias,
                                      void* dy);
// src f32 channels-last, dst channels-first in the storage dtype, rounded to nearest even.
Status launch_to_channels_first_rounded(DType dtype, const LayoutShape& s, const float* src, void* dst);

// maxpool_forward.cu. offsets null: inference (no argmax kept); else one offset of
// offset_bytes (1 or 2, offset_bytes_for) per output.
Status launch_maxpool_forward(DType dtype, const PoolShape& s, bool tie_last, const void* x, void* y, void* offsets,
                              int offset_bytes);

// maxpool_backward.cu: the deterministic gather dx[i] = sum of dy over windows whose
// offset points at i.
Status launch_maxpool_backward(DType dtype, const PoolShape& s, const void* dy, const void* offsets, int offset_bytes,
                               void* dx);

// maxpool_indices.cu: offsets <-> int64 flat plane indices at the interface. expand
// writes INT64_MIN for an offset never written (the sentinel). compress is synchronous:
// it returns out_of_range naming the first index that is no tap of its window.
Status launch_maxpool_expand_indices(const PoolShape& s, const void* offsets, int offset_bytes, int64_t* indices);
Status launch_maxpool_compress_indices(const PoolShape& s, const int64_t* indices, void* offsets, int offset_bytes);

// avgpool_forward.cu: y = the window's f32 sum / its divisor (pool_shape.h).
Status launch_avgpool_forward(DType dtype, const AvgPoolShape& s, const void* x, void* y);

// avgpool_backward.cu: the deterministic gather dx[i] = sum of dy / divisor over the
// windows that read i, in ascending output order.
Status launch_avgpool_backward(DType dtype, const AvgPoolShape& s, const void* dy, void* dx);

// device_copy.cu: `bytes` from src to dst on the device (the bandwidth ceiling's copy).
Status launch_device_copy(void* dst, const void* src, int64_t bytes);

}  // namespace kc::gpu
