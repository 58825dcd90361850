// The error bound of a transform algorithm (a backend that declares Winograd, FFT or
// another transform, kc/numerics.h), which replaces the per-element bound for direct
// sums of products. Following Barabasz, Anderson, Soodhalter and Gregg, "Error analysis
// and improving the accuracy of Winograd convolution for deep neural networks" (ACM
// TOMS 46(4), 2020), the first-order error of F(m, r) is a sum of the roundings of its
// stages (K of them on the longest chain: the channel sum plus, per dim, r for G g and
// twice m + r - 1 for B^T d and A^T), each weighted by the matrices' entries and the data.
// The paper bounds it in the worst case (all roundings aligned: gamma(K) times the
// product of the matrices' infinity norms, 190 per dim for F(4,3)); that came out a
// million times above oneDNN's errors, wide enough for a kernel writing zeros to pass.
// Here, as in Higham and Mary's probabilistic analysis ("A new approach to probabilistic
// rounding error analysis", SISC 41(5), 2019), roundings are independent and of mean zero,
// so the sum is bounded by lambda u sqrt(K) times the 2-norm of the weights
// (judge/tolerance.cpp), with probability at least 1 - 2 exp(-lambda^2 / 2). Per unit of
// data that norm is at most the growth below per dim (F(4,3): 9.71, so 94.3 in 2-D); the
// bound scales it by the largest sum of |w| |x| of the output plane.
// The error is spread over the tile, so an element's bound takes its magnitude from its
// whole output plane (normwise per plane), never from its own terms alone: an output
// whose direct sum is exactly 0 still carries its tile's rounding.
// The bound as users see it: docs/checks.md, "What a backend declares".
#pragma once

#include <cstdint>
#include <string>

#include "kc/numerics.h"
#include "kc/tensor.h"

namespace kc {

// max_i sqrt(|A^T|^2 (|G|^2 1 (.) |B^T|^2 1))_i^d for the declared algorithm over d spatial
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
