// The first-order rounding-error variance of a stack's gradients, for the stack
// `backward` check: what a correct kernel's sums in another order (errors of up to
// sqrt(n) * u_acc times the magnitude of each sum's terms) make of dx, dw and db once
// they have propagated through the layers, cancellation included.
// More on the method: docs/notes.md, section harness/src/stack/noise.h.
#pragma once

#include <string>
#include <vector>

#include "checks/checks.h"

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
