// Channels-first <-> channels-last copies for the CUTLASS engine (layout_map.h): NCDHW
// -> NDHWC activations and [K, C/G, T, R, S] -> KTRSC filters before its kernels, and the
// way back for what they write. A copy of elements, no arithmetic: bitwise the same
// values, NaN payloads included (moved as raw bits); except the f32 weight gradient's way
// back, rounded once to the storage dtype. Each outer block (a sample, a filter) is a
// [rows][cols] matrix transposed through 32x32 tiles in shared memory, so that both the
// reads and the writes of a warp are contiguous; the index maps of layout_map.h are what
// the device test holds the result to.
#include <cstdint>
#include <type_traits>

#include "dtype_traits.cuh"
#include "kc/gpu/kernels.h"
#include "kc/gpu/layout_map.h"

namespace kc::gpu {
namespace {

struct Bitwise {
  template <class T>
  __device__ T operator()(T v) const {
    return v;
  }
};
template <class T>
struct RoundTo {
  __device__ T operator()(float v) const { return detail::from_f32<T>(v); }
};

// dst block o = the transpose of src block o; tiles and blocks walked by grid-stride
// loops (grid.x over tiles, grid.y over blocks). Loads: thread (tx, ty) reads tile
// element (i, tx) for i = ty, ty + 8, ... (a warp reads 32 neighbours of a row); stores:
// it writes tile element (tx, i) to its transposed place (32 neighbours of a column).
template <class In, class Out, class Convert>
__global__ void transpose_kernel(TransposeShape t, const In* __restrict__ src, Out* __restrict__ dst, Convert convert) {
  __shared__ In tile[kTransposeTile][kTransposeTile + 1];  // +1: a column read spreads over the banks
  const int tx = threadIdx.x;
  for (int64_t o = blockIdx.y; o < t.outer; o += gridDim.y) {
    const In* s = src + o * t.rows * t.cols;
    Out* d = dst + o * t.rows * t.cols;
    for (int64_t k = blockIdx.x; k < t.tiles(); k += gridDim.x) {
      for (int i = threadIdx.y; i < kTransposeTile; i += kTransposeRowsPerPass) {
        const int64_t from = tile_source(t, k, i, tx);
        if (from >= 0) tile[i][tx] = s[from];
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTransposeTile; i += kTransposeRowsPerPass) {
        const int64_t to = tile_destination(t, k, tx, i);
        if (to >= 0) d[to] = convert(tile[tx][i]);
      }
      __syncthreads();
    }
  }
}

template <class In, class Out, class Convert>
Status launch_transpose(const LayoutShape& s, bool to_last, const In* src, Out* dst, Convert convert,
                        const char* what) {
  if (s.size() == 0) return ok_status();
  const TransposeShape t = transpose_shape(s, to_last);
  const dim3 grid(static_cast<unsigned>(t.tiles() < (1 << 20) ? t.tiles() : (1 << 20)),
                  static_cast<unsigned>(t.outer < 65535 ? t.outer : 65535));
  transpose_kernel<<<grid, dim3(kTransposeTile, kTransposeRowsPerPass), 0, detail::launch_stream()>>>(t, src, dst,
                                                                                                      convert);
  return detail::launch_status(what);
}

// The storage dtype's elements as raw bits of their width.
template <bool kToLast>
Status launch_bitwise(DType dtype, const LayoutShape& s, const void* src, void* dst, const char* what) {
  return detail::dispatch_dtype(dtype, what, [&](auto tag) {
    using Bits = std::conditional_t<sizeof(typename decltype(tag)::type) == 2, uint16_t, uint32_t>;
    return launch_transpose(s, kToLast, static_cast<const Bits*>(src), static_cast<Bits*>(dst), Bitwise{}, what);
  });
}

}  // namespace

Status launch_to_channels_last(DType dtype, const LayoutShape& s, const void* src, void* dst) {
  return launch_bitwise<true>(dtype, s, src, dst, "to channels-last");
}

Status launch_to_channels_first(DType dtype, const LayoutShape& s, const void* src, void* dst) {
  return launch_bitwise<false>(dtype, s, src, dst, "to channels-first");
}

Status launch_to_channels_first_rounded(DType dtype, const LayoutShape& s, const float* src, void* dst) {
  return detail::dispatch_dtype(dtype, "f32 to channels-first", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch_transpose(s, false, src, static_cast<T*>(dst), RoundTo<T>{}, "f32 to channels-first");
  });
}

}  // namespace kc::gpu
