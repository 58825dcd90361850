// implicit_gemm_problem (kc/gpu/cutlass_problem.h): the harness geometry as CUTLASS's
// implicit-GEMM problem.
#include <limits>
#include <string>

#include "kc/case.h"
#include "kc/gpu/cutlass_problem.h"

namespace kc::gpu {

StatusOr<ImplicitGemmProblem> implicit_gemm_problem(const ConvGeometry& g) {
  if (g.mode != PaddingMode::kZeros) {
    return unimplemented("padding_mode " + std::string(padding_mode_name(g.mode)) +
                         ": CUTLASS's problem pads with zeros only");
  }
  const int64_t rank = g.spatial.rank();
  if (rank < 1 || rank > 3) return invalid_argument("spatial rank " + std::to_string(rank) + ": 1 to 3");
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  const int64_t sizes[] = {g.batch, g.in_channels, g.out_channels, g.groups};
  for (int64_t v : sizes) {
    if (v > kIntMax) return unimplemented("a size of " + std::to_string(v) + " is past CUTLASS's int sizes");
  }
  ImplicitGemmProblem p;
  p.rank = rank == 3 ? 3 : 2;
  p.n = static_cast<int>(g.batch);
  p.c = static_cast<int>(g.in_channels);
  p.k = static_cast<int>(g.out_channels);
  p.groups = static_cast<int>(g.groups);
  const std::array<DimGeometry, 3> d = g.spatial.as_3d();  // unit dims first: rank 1 is H = 1
  for (int i = 0; i < 3; ++i) {
    const int64_t vals[] = {d[i].in, d[i].kernel, d[i].out, d[i].pad_lo, d[i].stride, d[i].dilation};
    for (int64_t v : vals) {
      if (v > kIntMax) return unimplemented("a size of " + std::to_string(v) + " is past CUTLASS's int sizes");
    }
    p.in[i] = static_cast<int>(d[i].in);
    p.filter[i] = static_cast<int>(d[i].kernel);
    p.out[i] = static_cast<int>(d[i].out);
    p.pad[i] = static_cast<int>(d[i].pad_lo);  // the high side follows from out
    p.stride[i] = static_cast<int>(d[i].stride);
    p.dilation[i] = static_cast<int>(d[i].dilation);
  }
  return p;
}

}  // namespace kc::gpu
