// Internal to the padding check (padding.cpp): the case on x padded explicitly, run with
// `valid` padding, and the comparisons of its outputs with the case's that the op
// modules' compare_padded_run choose from.
#pragma once

#include <cstdint>
#include <vector>

#include "checks/common.h"
#include "checks/findings.h"

namespace kc::checks {

using SourceTable = std::vector<std::vector<int64_t>>;  // per dim: padded coordinate -> input coordinate

struct Padded {
  Case c;
  OpGeometry geo;
  OpInputs in;
  SourceTable src;
  Dims ext;  // padded spatial extents
  int64_t planes = 1;
  bool trivial = true;  // no padding and nothing cropped: the padded case is the case
};

// dx against the padded run's dx folded back onto the elements each padded position
// copies (zero padding copies nothing: the padded run's interior).
void compare_dx(const CheckContext& ctx, const Padded& pd, const OpOutputs& run, const SpatialGeometry& sg,
                const Dims& x_shape, PaddingMode mode, rules::Findings& f, CheckResult& r);
// Conv: dw and db directly, dx after folding the padded run's dx back onto its sources.
void compare_conv_grads(const CheckContext& ctx, const Padded& pd, const OpOutputs& run, rules::Findings& f,
                        CheckResult& r);
// Max pool: the padded run's indices, mapped back to the unpadded plane, select the
// same elements.
void compare_pool_indices(const CheckContext& ctx, const Padded& pd, const OpOutputs& run, rules::Findings& f);

}  // namespace kc::checks
