// Which thread of an implicit-GEMM block touches which element of its tiles (igemm.cuh),
// as functions shared with the CPU tests that prove every element of every tile is
// loaded, computed and stored exactly once. Tile sizes are those of gemm_plan.h.
#pragma once

#include "kc/gpu/gemm_plan.h"
#include "kc/gpu/hd.h"

namespace kc::gpu {

// Element e (thread + i * kGemmThreads) of the A tile load: A is kTileM x kTileK.
// m_major: consecutive threads take consecutive m (coalesced when m runs along memory).
KC_HD void a_tile_coords(bool m_major, int e, int& mm, int& kk) {
  mm = m_major ? e % kTileM : e / kTileK;
  kk = m_major ? e / kTileM : e % kTileK;
}

// Element e of the B tile load: B is kTileK x kTileN.
KC_HD void b_tile_coords(bool k_major, int e, int& kk, int& nn) {
  kk = k_major ? e % kTileK : e / kTileN;
  nn = k_major ? e / kTileK : e % kTileN;
}

// f32 (FFMA) path: thread t owns rows 8*(t/16) + i (i < 8) and columns t%16 + 16*j (j < 4).
KC_HD void simt_coords(int thread, int i, int j, int& mm, int& nn) {
  mm = (thread / 16) * 8 + i;
  nn = thread % 16 + 16 * j;
}

// f16/bf16 (WMMA) path: warp w owns the 32x32 sub-tile (w/2, w%2) as 2x2 fragments of
// 16x16; fragment (i, j) starts at (mm, nn).
KC_HD void wmma_fragment_origin(int warp, int i, int j, int& mm, int& nn) {
  mm = (warp / 2) * 32 + i * 16;
  nn = (warp % 2) * 32 + j * 16;
}

// Element e of the epilogue: m fastest, so consecutive threads write consecutive
// output positions of the forward and backward-data layouts.
KC_HD void epilogue_coords(int e, int& mm, int& nn) {
  mm = e % kTileM;
  nn = e / kTileM;
}

}  // namespace kc::gpu
