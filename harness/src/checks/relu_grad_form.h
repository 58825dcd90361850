// A diagnosis of conv_bias_relu's backward: relu' applied as dy times a slope of 0 below
// 0 (oneDNN's reference kernel form), which gives NaN where an infinite dy meets a
// negative pre-activation, where the contract gives 0. Named only where it is the
// evidence: every gradient element the kernel made NaN (the oracle's finite) is NaN in the
// gradients recomputed with that form, and some infinite dy meets a negative z.
// Invariant: reads the case's tensors and the outputs only; never changes a verdict.
#pragma once

#include <string>

#include "checks/checks.h"

namespace kc::checks {

// "" when it does not hold, else a "; "-terminated sentence for the backward check.
std::string relu_grad_times_zero(const CheckContext& ctx, const ConvGeometry& g);

}  // namespace kc::checks
