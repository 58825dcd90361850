// conv_bias_relu on a candidate: a nonzero pre-activation z within its own error bound
// of 0 may land on either side of the relu in a correct kernel (its z rounds to 0 or
// crosses it), so relu'(z) there is ambiguous. The backward and gradcheck checks leave
// such outputs' dy out of what they expect and allow its whole possible contribution.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kc/checks.h"
#include "kc/ref/conv.h"

namespace kc::checks {

struct ReluAmbiguity {
  Tensor z;                     // the pre-activation conv(x, w) + b in f64
  std::vector<bool> ambiguous;  // per output: within the rounding of y of 0, not an exact 0
  int64_t count = 0;
};

ReluAmbiguity relu_ambiguity(const CheckContext& ctx, const ConvGeometry& g);

// What the ambiguous outputs' dy can move each gradient by: the conv backward of |x|
// and |w| for |dy| at the ambiguous outputs (db: the sum of those |dy|).
ref::ConvGrads ambiguity_slack(const CheckContext& ctx, const ConvGeometry& g, const ReluAmbiguity& a);

// Why the ambiguity swamps the gradients, or empty: in each of dx, dw and db (dw and db
// alone when `with_dx` is false, for a check that judges only those), fewer than a
// quarter of the elements lie out of its reach (the ambiguous outputs may move them by
// half their size or more), so a wrong relu mask could pass. Such data cannot judge the
// mask at this precision: the verdict is MISTRUSTED, never PASSED.
std::string ambiguity_swamps(const ReluAmbiguity& a, const ref::ConvGrads& slack, const OpOutputs& ref,
                             bool with_dx = true);

// Why the ambiguity swamps one of the gradients on its own (the first of dx, dw and db,
// or of dw and db when `with_dx` is false), or empty. A check that judges several
// gradients and passes them all is MISTRUSTED for this: a wrong swamped gradient (a
// mean instead of a sum in dw) hides in its slack while the others are judged.
std::string swamped_gradient(const ReluAmbiguity& a, const ref::ConvGrads& slack, const OpOutputs& ref,
                             bool with_dx = true);

// The oracle's conv_bias_relu gradients with the ambiguous outputs' dy left out, and
// the slack those outputs may add (ambiguity_slack): a right kernel's dx, dw and db lie
// within `slack` of `want` (plus the rounding of its sums). With no ambiguous output
// `want` and `slack` are empty and the oracle's gradients are expected as they are.
struct FusedExpectation {
  ref::ConvGrads want;
  ref::ConvGrads slack;
  int64_t ambiguous = 0;
  std::string swamped;          // ambiguity_swamps(): why the gradients cannot be judged, or empty
  std::string swamped_weights;  // the same for dw and db alone (weight_share judges only those)
  std::string one_swamped;         // swamped_gradient(): one of dx, dw, db cannot be judged, or empty
  std::string one_weight_swamped;  // the same for dw and db alone
};

FusedExpectation fused_expectation(const CheckContext& ctx, const ConvGeometry& g);

}  // namespace kc::checks
