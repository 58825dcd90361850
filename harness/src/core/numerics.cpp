// Names of a backend's declared numerics (kc/numerics.h).
#include "kc/numerics.h"

namespace kc {

std::string algorithm_name(const Numerics& n) {
  switch (n.algorithm) {
    case Algorithm::kDirect:
      return "direct";
    case Algorithm::kWinograd:
      return "winograd F(" + std::to_string(n.transform_m) + "," + std::to_string(n.transform_r) + ")";
    case Algorithm::kFft:
      return "fft";
    case Algorithm::kOtherTransform:
      return "other transform";
  }
  return "?";
}

std::string_view relu_nan_grad_name(ReluNanGrad g) {
  switch (g) {
    case ReluNanGrad::kEither:
      return "0 or dy";
    case ReluNanGrad::kZero:
      return "0";
    case ReluNanGrad::kPassDy:
      return "dy";
  }
  return "?";
}

std::string describe(const Numerics& n) {
  return "accumulation " + (n.accumulation ? std::string(dtype_name(*n.accumulation)) : std::string("as the case")) +
         ", " + algorithm_name(n) + ", subnormals " + (n.flushes_subnormals ? "flushed" : "kept") + ", padding taps " +
         (n.skips_padding_taps ? "skipped" : "multiplied") + ", relu'(NaN) " +
         std::string(relu_nan_grad_name(n.relu_nan_grad));
}

}  // namespace kc
