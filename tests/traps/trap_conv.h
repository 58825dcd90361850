// The trap zoo's convolution: a direct-loop conv / conv_bias_relu (forward, dx, dw, db)
// written apart from reference/, with f64 accumulation and outputs rounded to the
// storage dtype like a real kernel's. With Bug::kNone it is correct (trap.none proves it
// on the whole corpus); each conv trap switches on exactly one planted bug, at the one
// place a real kernel got it wrong.
#pragma once

#include "kc/case.h"
#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"
#include "trap_list.h"

namespace kc::traps {

// What a call needs besides its tensors: the planted bug, and the padding form the case
// was written with. The resolved geometry no longer says whether padding was asked as
// `same`; a framework kernel gets that as a flag, here from Backend::supports(case).
struct ConvSetup {
  Bug bug = Bug::kNone;
  PadKind form = PadKind::kExplicit;
};

// b is null without a bias; relu: conv_bias_relu. Outputs arrive with the contract's
// shape; a trap that mis-resolves the geometry may hand back another (valid_for_same).
Status trap_conv_forward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                         bool relu, Tensor& y);
Status trap_conv_backward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                          bool relu, const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db);

}  // namespace kc::traps
