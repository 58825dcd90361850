// What a oneDNN peer refuses, with the reason: only what oneDNN cannot run. The rules
// of the case come first (f64 storage, an accumulation other than f32, max-pool tie: last,
// padding modes other than zeros),
// then oneDNN itself is asked: the primitive descriptors of every direction the case
// runs are created, so that a case accepted here is never turned down by an op later.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "kc/case.h"
#include "kc/status.h"
#include "onednn_conv.h"

namespace kc::onednn {

Status onednn_supports(const Case& c, Flavor flavor, const dnnl::engine& engine);

// Pooling has no Winograd: onednn.winograd pools as onednn does.
inline Flavor pool_flavor(Flavor f) { return f == Flavor::kWinograd ? Flavor::kAny : f; }

}  // namespace kc::onednn
