// The tile rule of the CUTLASS engine (docs/architecture.md, "CUTLASS"): a pass of an
// implicit-GEMM convolution is a GEMM of M x N outputs over K; the large tile where it
// fills the device with at least one wave of thread blocks, else the small one (64x64),
// whose more blocks keep more multiprocessors busy on a small layer. Plain C++: decided and tested on the host.
#pragma once

#include <cstdint>

#include "kc/gpu/implicit_gemm_problem.h"

namespace kc::gpu {

enum class ConvPass { kFprop, kDgrad, kWgrad };

struct GemmExtent {
  int64_t m = 0, n = 0, k = 0;
};

// fprop: M = N*Z*P*Q output pixels, N = K filters, K = C*T*R*S;
// dgrad: M = N*D*H*W input pixels, N = C, K = K*T*R*S;
// wgrad: M = K filters, N = C*T*R*S, K = N*Z*P*Q (the sum over the batch and positions).
GemmExtent implicit_gemm_extent(const ImplicitGemmProblem& p, ConvPass pass);

enum class TileSize { kLarge, kSmall };
// A thread block's GEMM tile, M x N: the catalog's large tile of a pass (128x128 for
// fprop and dgrad, 64x256 for 16-bit wgrad); the small one is 64x64.
struct TileMN {
  int m, n;
};
// An H100 or H200 SXM has 132 multiprocessors; a device that reports another count
// passes it.
inline constexpr int kHopperSms = 132;

// Strided dgrad's blocks per stride phase are not counted apart (an estimate there).
TileSize tile_for(const GemmExtent& e, TileMN large, int sms = kHopperSms);

}  // namespace kc::gpu
