// A conv that never multiplies its zero-padding taps (kc/numerics.h: skips_padding_taps)
// differs from the contract only where a non-finite weight (forward) or cotangent (dw)
// meets a padding tap: the contract forms NaN * 0 = NaN there, such a kernel adds
// nothing. These are the expected y and dw of such a kernel, by direct loops over the
// taps inside the input, in f64: what a check accepts from a backend that declares it,
// and what names the difference in one that does not.
#pragma once

#include <optional>

#include "checks/checks.h"

namespace kc::checks {

// An expected tensor without padding taps, and its terms' magnitudes (the bound's).
struct SkippedTaps {
  Tensor value, abs;
};

// y (bias and relu included) without padding taps; nullopt when it would equal the
// oracle's (zero padding with every weight finite, or no padding, or another mode).
std::optional<SkippedTaps> y_without_padding_taps(const CheckContext& ctx, const ConvGeometry& g);

// dw for the cotangent dz (dy, or dy through relu') without padding taps; nullopt when
// it would equal the oracle's (no non-finite dz, no padding, or another mode).
std::optional<SkippedTaps> dw_without_padding_taps(const CheckContext& ctx, const ConvGeometry& g, const Tensor& dz);

}  // namespace kc::checks

namespace kc::checks {

// Whether the candidate declares that it skips zero-padding taps (never the oracle).
bool declares_padding_skip(const CheckContext& ctx);

// Compares one tensor with the oracle's `strict` value into r; where `skipped` (the
// value without padding taps) is given and explains a failure, a backend that declares
// skips_padding_taps passes (and the message says so), one that does not fails with the
// name "NaN*0 at a zero-padding tap not formed".
void compare_padding_taps(const CheckContext& ctx, const char* tensor, const Tensor& cand, const Tensor& strict,
                          const Tensor& abs, const std::optional<SkippedTaps>& skipped, CheckResult& r);

}  // namespace kc::checks
