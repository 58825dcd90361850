// What a backend declares about its arithmetic (docs/checks.md, "What a backend
// declares"). The default is the strict contract: direct sums of products in the case's
// accumulation dtype, subnormals kept, every zero-padding tap multiplied, and either
// convention for relu'(NaN). The tolerance model and the checks read it: a declared
// difference is allowed (and the allowance is bounded), an undeclared one fails with
// its name.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kc/dtype.h"

namespace kc {

enum class Algorithm {
  kDirect,          // sums of products (GEMM, implicit GEMM, direct loops)
  kWinograd,        // Winograd F(m, r) minimal filtering
  kFft,             // FFT convolution
  kOtherTransform,  // another transform of inputs and weights
};

// What dx (and so dw, db) receives where a fused relu's pre-activation is NaN.
enum class ReluNanGrad {
  kEither,  // 0 or dy: both are accepted, and the report names which the backend did
  kZero,    // the reference's: relu'(NaN) = 0 (NaN > 0 is false)
  kPassDy,  // PyTorch's threshold_backward and oneDNN: dy passes
};

struct Numerics {
  std::optional<DType> accumulation;  // empty: the case's (f32 for f16/bf16 storage)
  Algorithm algorithm = Algorithm::kDirect;
  int transform_m = 0, transform_r = 0;  // F(m, r) of a Winograd algorithm
  bool flushes_subnormals = false;       // subnormal results (and converted inputs) become 0
  bool skips_padding_taps = false;       // zero-padding taps are never multiplied: NaN*0 is not formed there
  ReluNanGrad relu_nan_grad = ReluNanGrad::kEither;

  bool transform() const { return algorithm != Algorithm::kDirect; }
};

// "winograd F(4,3)", "direct", ...
std::string algorithm_name(const Numerics& n);
std::string_view relu_nan_grad_name(ReluNanGrad g);
// One line for `kcheck backends` and the report: "accumulation case, direct, subnormals
// kept, padding taps multiplied, relu'(NaN) 0 or dy".
std::string describe(const Numerics& n);

}  // namespace kc
