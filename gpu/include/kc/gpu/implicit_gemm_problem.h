// The problem CUTLASS's implicit-GEMM kernels take (the fields of Conv2dProblemSize and
// Conv3dProblemSize), as plain C++17 so that nvcc's translation units and host tests
// share it; kc/gpu/cutlass_problem.h maps a convolution to it and says its invariants.
#pragma once

#include <array>

namespace kc::gpu {

struct ImplicitGemmProblem {
  int rank = 2;  // 2: Conv2d (ranks 1 and 2), 3: Conv3d
  int n = 1, c = 1, k = 1, groups = 1;
  // Per spatial dim, outermost first (3-D: D, H, W / T, R, S / Z, P, Q; 2-D uses [1] and
  // [2], and [0] is 1 with no padding).
  std::array<int, 3> in{1, 1, 1}, filter{1, 1, 1}, out{1, 1, 1};
  std::array<int, 3> pad{0, 0, 0}, stride{1, 1, 1}, dilation{1, 1, 1};
  bool cross_correlation = true;
};

inline bool operator==(const ImplicitGemmProblem& a, const ImplicitGemmProblem& b) {
  return a.rank == b.rank && a.n == b.n && a.c == b.c && a.k == b.k && a.groups == b.groups && a.in == b.in &&
         a.filter == b.filter && a.out == b.out && a.pad == b.pad && a.stride == b.stride && a.dilation == b.dilation &&
         a.cross_correlation == b.cross_correlation;
}

}  // namespace kc::gpu
