// What a oneDNN peer refuses, with the reason: only what oneDNN cannot run, or runs other
// than the contract defines it. The rules of the case come first (f64 storage, an
// accumulation other than f32, max-pool tie: last, padding modes other than zeros, an
// avgpool divisor, count_include_pad: true with a ceil_mode window past in + pad_hi),
// then oneDNN itself is asked: the primitive descriptors of every direction the case
// runs are created, so that a case accepted here is never turned down by an op later.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "kc/case.h"
#include "kc/status.h"
#include "onednn_conv.h"

namespace kc::onednn {

Status onednn_supports(const Case& c, Flavor flavor, const dnnl::engine& engine);

// Pooling has no Winograd: onednn.winograd pools (max and average) as onednn does.
inline Flavor pool_flavor(Flavor f) { return f == Flavor::kWinograd ? Flavor::kAny : f; }

}  // namespace kc::onednn
