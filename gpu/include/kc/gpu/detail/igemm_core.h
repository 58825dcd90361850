// The per-thread steps of the implicit-GEMM block (igemm.cuh) written once for both
// sides: the CUDA kernel calls them with threadIdx.x, and the CPU tests run the same
// code thread by thread (tests/gpu/igemm_sim_test.cpp), phase by phase between the
// barriers, to prove tiling, bounds, splits and epilogue against the reference. Only the
// tensor-core MMA itself (WMMA, f16/bf16) exists on the device side alone.
#pragma once

#include "kc/gpu/gemm_plan.h"
#include "kc/gpu/gemm_tile.h"
#include "kc/gpu/hd.h"

namespace kc::gpu::detail {

inline constexpr int kPadK = 8;  // row padding in elements: WMMA wants 32-byte aligned
inline constexpr int kPadN = 8;  // rows, and the padding staggers shared-memory banks
inline constexpr int kPadC = 4;

template <class T>
struct GemmSmem {
  alignas(128) T a[kTileM][kTileK + kPadK];
  alignas(128) T b[kTileK][kTileN + kPadN];
  alignas(128) float c[kTileN][kTileM + kPadC];  // transposed: c[n][m], m runs along memory
};

// One block's place in the problem: blockIdx (x: M tile, y: N tile, z: group x split).
struct GemmBlock {
  int g, split, m0, n0, k_begin, k_end;
};

template <class Map>
KC_HD GemmBlock gemm_block(const Map& map, int bx, int by, int bz, int group_base, int splits, int k_per_split) {
  GemmBlock b;
  b.g = group_base + bz / splits;
  b.split = bz % splits;
  b.m0 = bx * kTileM;
  b.n0 = by * kTileN;
  b.k_begin = b.split * k_per_split;
  // Written as differences: k_begin + k_per_split may pass 2^31 when K is near it.
  b.k_end = map.k_size() - b.k_begin < k_per_split ? map.k_size() : b.k_begin + k_per_split;
  return b;
}

// Thread `tid`'s share of the A tile at k0: zero outside the problem or the split, and
// where the map says the element is a zero (padding, stride hole).
template <class T, class Map>
KC_HD void load_a_tile(const Map& map, const T* src, T zero, const GemmBlock& blk, int k0, int tid, GemmSmem<T>& sm) {
  for (int e = tid; e < kTileM * kTileK; e += kGemmThreads) {
    int mm, kk;
    a_tile_coords(Map::kAMajorM, e, mm, kk);
    T v = zero;
    if (mm < map.m_size() - blk.m0 && kk < blk.k_end - k0) {  // differences: no int overflow
      const int idx = map.a_index(blk.g, blk.m0 + mm, k0 + kk);
      if (idx >= 0) v = src[idx];
    }
    sm.a[mm][kk] = v;
  }
}

template <class T, class Map>
KC_HD void load_b_tile(const Map& map, const T* src, T zero, const GemmBlock& blk, int k0, int tid, GemmSmem<T>& sm) {
  for (int e = tid; e < kTileK * kTileN; e += kGemmThreads) {
    int kk, nn;
    b_tile_coords(Map::kBMajorK, e, kk, nn);
    T v = zero;
    if (nn < map.n_size() - blk.n0 && kk < blk.k_end - k0) {
      const int idx = map.b_index(blk.g, k0 + kk, blk.n0 + nn);
      if (idx >= 0) v = src[idx];
    }
    sm.b[kk][nn] = v;
  }
}

// The CUDA-core path (f32 on the device; f64 in the CPU tests): thread tid's 8x4 outputs.
template <class T, class Acc>
KC_HD void simt_mma(const GemmSmem<T>& sm, int tid, Acc (&acc)[8][4]) {
  int row[8], col[4], unused;
  for (int i = 0; i < 8; ++i) simt_coords(tid, i, 0, row[i], unused);
  for (int j = 0; j < 4; ++j) simt_coords(tid, 0, j, unused, col[j]);
  for (int kk = 0; kk < kTileK; ++kk) {
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 4; ++j) acc[i][j] += static_cast<Acc>(sm.a[row[i]][kk]) * static_cast<Acc>(sm.b[kk][col[j]]);
    }
  }
}

template <class T, class Acc>
KC_HD void simt_store(const Acc (&acc)[8][4], int tid, GemmSmem<T>& sm) {
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      int mm, nn;
      simt_coords(tid, i, j, mm, nn);
      sm.c[nn][mm] = static_cast<float>(acc[i][j]);
    }
  }
}

// Thread tid's share of the epilogue: every C element of the tile inside the problem.
template <class T, class Map, class Epilogue>
KC_HD void epilogue_tile(const Map& map, const GemmBlock& blk, int tid, const GemmSmem<T>& sm, const Epilogue& epi) {
  for (int e = tid; e < kTileM * kTileN; e += kGemmThreads) {
    int mm, nn;
    epilogue_coords(e, mm, nn);
    if (mm < map.m_size() - blk.m0 && nn < map.n_size() - blk.n0) {
      epi(blk.g, blk.m0 + mm, blk.n0 + nn, sm.c[nn][mm], blk.split);
    }
  }
}

}  // namespace kc::gpu::detail
