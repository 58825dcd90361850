// The first-order rounding-error variance of a stack's gradients, for the stack
// `backward` check: what a correct kernel's sums in another order (errors of up to
// sqrt(n) * u_acc times the magnitude of each sum's terms) make of dx, dw and db once
// they have propagated through the layers, cancellation included.
//
// Model (f64, from the oracle's run): every layer output z gets an independent local
// error of standard deviation at most s = u * sqrt(n) * L, L = sum of |terms| (n terms;
// the output's rounding to the dtype is within it). Independent errors propagate
// through a linear map by the squares of its coefficients, so with the oracle's relu
// masks and argmaxes:
//   forward   Vz_l   = conv(Va_{l-1}, w∘w) + s_l²,        Va_l = mask/gather of Vz_l
//   backward  Vdz_l  = mask ∘ (scatter(Vg_l) + s_pool²),  Vg_{l-1} = conv_bd(Vdz_l, w∘w) + s_bd²
//             Vdw_l  = conv_bw(Va_{l-1}, dz∘dz) + conv_bw(a_{l-1}∘a_{l-1}, Vdz_l) + s_bw²
//             Vdb_l  = sum(Vdz_l) + s_db²
// where dz is the oracle's conv-output cotangent and s_pool the rounding of the sums
// of overlapping windows' cotangents in a max pool's backward (on the scatter of the
// oracle's |g|; without a pool, dz's storage in the dtype). Errors of one source reach
// an element along several paths (neighbouring outputs share inputs; an overlapping
// pool copies one maximum into several windows), and squares of path sums are not sums
// of squared paths; the cross terms are products of independently drawn weights of
// either sign (the stack fill is symmetric, stack_exec.cpp), so they average to 0 and
// the propagation by squares is the expected variance over the weights. A relu input or a max
// pool's argmax that an error moves is outside this first-order model: the check is not
// judged where one could (unforced_routing). Internal to the checks.
#pragma once

#include <string>
#include <vector>

#include "kc/checks.h"

namespace kc::checks {

struct GradVariance {
  Tensor dx;                   // per element
  std::vector<Tensor> dw, db;  // per layer; db empty-shaped without a bias
};

// Empty when the oracle's values force every routing decision of the stack, so that a
// correct run in the dtype routes the gradient where the oracle does: every relu input
// whose cotangent is not 0 is more than `sigmas` standard deviations of its rounding
// error (the forward model above) away from 0, and in every max-pool window the
// maximum exceeds each other tap (and 0, after a relu) by more than that much for
// their difference, or a window of relu zeros has no input that could round above 0.
// Taps whose every term but the bias is 0 tie harmlessly. Else the first layer that
// has decisions that are not forced, and how many.
std::string unforced_routing(const StackContext& s, double u, double sigmas);

// u: the unit roundoff of the accumulation. Needs the oracle's activations and conv
// cotangents in s.ref.
GradVariance gradient_error_variance(const StackContext& s, double u);

}  // namespace kc::checks
