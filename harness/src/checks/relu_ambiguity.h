// conv_bias_relu on a candidate: a nonzero pre-activation z within its own error bound
// of 0 may land on either side of the relu in a correct kernel (its z rounds to 0 or
// crosses it), so relu'(z) there is ambiguous. The backward and gradcheck checks leave
// such outputs' dy out of what they expect and allow its whole possible contribution.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checks/checks.h"
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

// How far the ambiguous outputs' slack reaches into each of dx, dw and db, counted once
// (swamping()). A gradient is swamped where fewer than a quarter of its elements that
// can show anything (the oracle's value or the slack is not 0) lie out of its reach:
// the ambiguous outputs may move the rest by half their size or more.
struct Swamping {
  struct Reach {
    const char* name;
    int64_t clear = 0;                                                     // moved by less than half their size
    int64_t elements = 0;                                                  // that can show anything
    bool swamped() const { return elements > 0 && 4 * clear < elements; }  // a quarter clear shows a wrong mask
  };
  std::vector<Reach> reaches;  // dx, dw, db, those the op has
  int64_t ambiguous = 0;       // 0: nothing is swamped
  int64_t outputs = 0;

  // Why every gradient is swamped (dw and db alone when `with_dx` is false, for a check
  // that judges only those), or empty: a wrong relu mask could pass, so such data
  // cannot judge the mask at this precision and the verdict is MISTRUSTED, never PASSED.
  std::string all(bool with_dx = true) const;
  // Why one gradient is swamped on its own (the first), or empty. A check that judges
  // several gradients and passes them all is MISTRUSTED for this: a wrong swamped
  // gradient (a mean instead of a sum in dw) hides in its slack while the others are judged.
  std::string one(bool with_dx = true) const;
};

Swamping swamping(const ReluAmbiguity& a, const ref::ConvGrads& slack, const OpOutputs& ref);

// The oracle's conv_bias_relu gradients with the ambiguous outputs' dy left out, and
// the slack those outputs may add (ambiguity_slack): a right kernel's dx, dw and db lie
// within `slack` of `want` (plus the rounding of its sums). With no ambiguous output
// `want` and `slack` are empty and the oracle's gradients are expected as they are.
struct FusedExpectation {
  ref::ConvGrads want;
  ref::ConvGrads slack;
  int64_t ambiguous = 0;
  Swamping swamp;  // whether the ambiguity leaves the gradients, or one of them, unjudged
};

// nan_passes: relu'(NaN) routes dy (PyTorch's threshold_backward, oneDNN) instead of the
// oracle's 0; `want` is then filled whenever some pre-activation is NaN.
FusedExpectation fused_expectation(const CheckContext& ctx, const ConvGeometry& g, bool nan_passes = false);

// How many pre-activations z = conv(x, w) + b are NaN, where relu'(z) is a convention
// (docs/ops.md, "Activation and fused op": 0 or dy are both accepted, and the report names which).
int64_t nan_preactivations(const ReluAmbiguity& a);

}  // namespace kc::checks
