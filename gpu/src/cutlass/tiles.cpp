// implicit_gemm_extent and tile_for (kc/gpu/cutlass_tiles.h).
#include "kc/gpu/cutlass_tiles.h"

namespace kc::gpu {

GemmExtent implicit_gemm_extent(const ImplicitGemmProblem& p, ConvPass pass) {
  const int64_t in_pixels = int64_t{p.n} * p.in[0] * p.in[1] * p.in[2];
  const int64_t out_pixels = int64_t{p.n} * p.out[0] * p.out[1] * p.out[2];
  const int64_t taps = int64_t{p.filter[0]} * p.filter[1] * p.filter[2];
  switch (pass) {
    case ConvPass::kFprop:
      return {out_pixels, p.k, int64_t{p.c} / p.groups * taps};
    case ConvPass::kDgrad:
      return {in_pixels, p.c, int64_t{p.k} / p.groups * taps};
    case ConvPass::kWgrad:
      return {p.k, int64_t{p.c} / p.groups * taps, out_pixels};
  }
  return {};
}

TileSize tile_for(const GemmExtent& e, TileMN large, int sms) {
  const int64_t blocks = ((e.m + large.m - 1) / large.m) * ((e.n + large.n - 1) / large.n);
  return blocks >= sms ? TileSize::kLarge : TileSize::kSmall;
}

}  // namespace kc::gpu
