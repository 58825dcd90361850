// The error bound of a transform algorithm (a backend that declares Winograd, FFT or
// another transform, kc/numerics.h), which replaces the per-element bound for direct
// sums of products. Following Barabasz, Anderson, Soodhalter and Gregg, "Error analysis
// and improving the accuracy of Winograd convolution for deep neural networks" (ACM
// TOMS 46(4), 2020), the first-order error of F(m, r) over d spatial dims is bounded
// componentwise by
//   |y^ - y| <= gamma(K, u) * (|A^T| (|G| |g| (.) |B^T| |d|))      (per dim, Kronecker in d)
// with K the longest chain of sums (the channel sum plus, per dim, r for G g and twice
// m + r - 1 for B^T d and A^T). With |g|, |d| at most their largest, the growth per dim
// is the largest row of |A^T| (|G| 1 (.) |B^T| 1), not the product of the matrices'
// infinity norms that the paper's normwise form takes (F(4,3): 48 against 190, so
// 2304 against 36100 in 2-D; oneDNN's F(4x4,3x3) errors sit near 1e-3 of the former).
// The error is spread over the tile, so an element's bound takes its magnitude from its
// whole output plane (normwise per plane), never from its own terms alone: an output
// whose direct sum is exactly 0 still carries its tile's rounding.
// More on the method: docs/notes.md, section harness/src/run/transform_bound.h.
#pragma once

#include <cstdint>
#include <string>

#include "kc/numerics.h"
#include "kc/tensor.h"

namespace kc {

// max_i (|A^T| (|G| 1 (.) |B^T| 1))_i^d for the declared algorithm over d spatial
// dims; infinity where no bound is known (FFT, other transforms, a Winograd F(m, r)
// whose matrices are not tabulated): such a backend's results are then unbounded, and
// the tolerance model says so (MISTRUSTED, never PASSED).
double transform_growth(const Numerics& n, int spatial_rank);

// The extra length of the chain of sums a transform adds, per its spatial dims.
int64_t transform_terms(const Numerics& n, int spatial_rank);

// Every element of t (laid out [N, C, spatial...], or [C] for a bias) replaced by the
// largest magnitude of its plane (the trailing dims past the first two).
void spread_over_planes(Tensor& t);

}  // namespace kc
