// The one implicit-GEMM kernel behind conv forward, backward-data and backward-weight.
// A Map (conv_shape.h) says where each A and B element lives (or that it is a zero); an
// Epilogue consumes each finished C element. One block computes a kTileM x kTileN tile
// of C for one group and one K split, in kTileK steps through shared memory:
//   f16/bf16: WMMA m16n16k16 on tensor cores, f32 accumulators (4 warps, 32x32 each);
//   f32:      FFMA on CUDA cores (no TF32: the tolerance model assumes f32 products).
// More on the method: docs/notes.md, section gpu/src/igemm.cuh.
#pragma once

#include <mma.h>

#include <type_traits>

#include "dtype_traits.cuh"
#include "kc/gpu/detail/igemm_core.h"

namespace kc::gpu::detail {

// f32: CUDA cores, FFMA (igemm_core.h; the compiler fuses the multiply-adds).
struct SimtAccumulator {
  float acc[8][4];
  __device__ void zero() {
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  }
  __device__ void mma(const GemmSmem<float>& sm) { simt_mma(sm, static_cast<int>(threadIdx.x), acc); }
  __device__ void store(GemmSmem<float>& sm) const { simt_store(acc, static_cast<int>(threadIdx.x), sm); }
};

// f16/bf16: warp w owns the 32x32 sub-tile (w / 2, w % 2) as 2x2 WMMA fragments
// (wmma_fragment_origin, gemm_tile.h).
template <class T>
struct WmmaAccumulator {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc[2][2];
  __device__ void zero() {
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) nvcuda::wmma::fill_fragment(acc[i][j], 0.f);
  }
  __device__ void mma(const GemmSmem<T>& sm) {
    using namespace nvcuda;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    for (int kk = 0; kk < kTileK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[2];
      for (int f = 0; f < 2; ++f) {
        int mm, nn, unused;
        wmma_fragment_origin(warp, f, 0, mm, unused);  // A: the rows of fragment row f
        wmma_fragment_origin(warp, 0, f, unused, nn);  // B: the columns of fragment column f
        wmma::load_matrix_sync(a[f], &sm.a[mm][kk], kTileK + kPadK);
        wmma::load_matrix_sync(b[f], &sm.b[kk][nn], kTileN + kPadN);
      }
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }
  __device__ void store(GemmSmem<T>& sm) const {
    using namespace nvcuda;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        int mm, nn;
        wmma_fragment_origin(warp, i, j, mm, nn);
        // Column-major store: fragment element (r, c) lands at c[nn + c][mm + r].
        wmma::store_matrix_sync(&sm.c[nn][mm], acc[i][j], kTileM + kPadC, wmma::mem_col_major);
      }
  }
};

template <class T>
using Accumulator = std::conditional_t<std::is_same_v<T, float>, SimtAccumulator, WmmaAccumulator<T>>;

struct GemmArgs {
  int group_base;
  int splits;
  int k_per_split;
};

template <class T, class Map, class Epilogue>
__global__ void __launch_bounds__(kGemmThreads)
    igemm_kernel(Map map, const T* __restrict__ a, const T* __restrict__ b, Epilogue epi, GemmArgs args) {
  // Raw bytes: __shared__ variables may not have constructors (__half has one).
  __shared__ alignas(128) unsigned char raw[sizeof(GemmSmem<T>)];
  GemmSmem<T>& sm = *reinterpret_cast<GemmSmem<T>*>(raw);
  const int tid = static_cast<int>(threadIdx.x);
  const GemmBlock blk = gemm_block(map, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y),
                                   static_cast<int>(blockIdx.z), args.group_base, args.splits, args.k_per_split);
  const T zero = from_f32<T>(0.f);
  Accumulator<T> acc;
  acc.zero();
  for (int k0 = blk.k_begin; k0 < blk.k_end; k0 += kTileK) {
    load_a_tile(map, a, zero, blk, k0, tid, sm);
    load_b_tile(map, b, zero, blk, k0, tid, sm);
    __syncthreads();
    acc.mma(sm);
    __syncthreads();  // the next loads overwrite the tiles
  }
  acc.store(sm);
  __syncthreads();
  epilogue_tile(map, blk, tid, sm, epi);
}

// Runs the GEMM of `map` as `plan` says (plan_gemm, gemm_plan.h).
template <class T, class Map, class Epilogue>
Status run_igemm(const Map& map, const T* a, const T* b, const Epilogue& epi, const GemmPlan& plan, const char* name) {
  for (const GemmLaunch& l : plan.launches) {
    const dim3 grid(static_cast<unsigned>(l.grid_x), static_cast<unsigned>(l.grid_y), static_cast<unsigned>(l.grid_z));
    igemm_kernel<T, Map, Epilogue><<<grid, kGemmThreads, 0, detail::launch_stream()>>>(
        map, a, b, epi, GemmArgs{l.group_base, plan.splits, plan.k_per_split});
    KC_RETURN_IF_ERROR(launch_status(name));
  }
  return ok_status();
}

// Without a split of K.
template <class T, class Map, class Epilogue>
Status run_igemm(const Map& map, const T* a, const T* b, const Epilogue& epi, int groups, const char* name) {
  return run_igemm(map, a, b, epi, plan_gemm(map.m_size(), map.n_size(), map.k_size(), groups, 1), name);
}

}  // namespace kc::gpu::detail
