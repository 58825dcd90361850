// The backend interface (docs/plugins.md). A backend runs the ops of a case on host
// tensors; a GPU backend copies in and out internally.
//
// Calling contract. The integrity check enforces it on every call of a case
// (checks/integrity.cpp through backend/invoke.h), and once the case's checks are done
// adds what only the end shows (run/late_integrity.h); the stack executor holds each
// per-layer call to it too (stack/stack_exec.cpp):
//  - Outputs (y, indices, dx, dw, db) are allocated by the harness with the contract's
//    shapes and the case dtype, and poisoned before each call: every element a quiet NaN
//    with its own payload (kc::poison_value(), tensor.h), every index INT64_MIN
//    (kPoisonIndex). The backend writes every element, stored in the case dtype: a poison
//    left is an element never written; a NaN the kernel computed is a value, which
//    forward judges.
//  - Outputs are written in place: a buffer is not replaced, resized or kept, and nothing
//    writes into it after the call returns (each output's bits are hashed as its call
//    returns and compared once the checks are done: "y changed after the call returned").
//  - Inputs (x, w, b, dy) are const and must be unchanged after the call, and
//    nothing is written outside a buffer (each lies between guard bands, host_buffer.h).
//  - No exception crosses this interface: errors are Status values (an exception out of
//    a call, available() or supports() is the case's CRASHED). available() returns
//    unavailable(reason) when the backend cannot run at all; supports() returns
//    unimplemented(reason) for a case it does not run (SKIPPED with the reason). An op
//    call that returns unimplemented or unavailable leaves what needed it SKIPPED; any
//    other error FAILS it.
//  - maxpool_backward with null indices (an inference-mode forward keeps none) is refused
//    with failed_precondition, never answered with zero gradients.
//  - Every call, available() and supports() included, leaves the floating-point
//    environment's control bits (rounding, FTZ/DAZ, exception masks) as it found them;
//    the judge pins its own again after each call (backend/candidate_call.h).
#pragma once

#include <memory>
#include <string>

#include "kc/case.h"
#include "kc/numerics.h"
#include "kc/prepared_op.h"
#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  virtual Status available() const { return ok_status(); }
  virtual Status supports(const Case& c) const {
    (void)c;
    return ok_status();
  }

  // conv and conv_bias_relu (relu == true: y = relu(conv(x, w) + b)). b is null
  // without a bias.
  virtual Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                              Tensor& y) = 0;
  // dx, dw and (with a bias) db for the cotangent dy; with relu the backend routes dy
  // through relu'(z), z = conv(x, w) + b. db is null without a bias.
  virtual Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                               const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) = 0;
  // indices is null in inference mode (the kernel keeps none).
  virtual Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) = 0;
  // Must refuse (failed_precondition) when indices is null: never silently zero dx.
  virtual Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) = 0;

  // How the backend computes (kc/numerics.h); the default is the strict contract. Last in
  // the class, so that the layout of the calls above stays as it was.
  virtual Numerics numerics() const { return {}; }

  // For `kcheck bench` (kc/prepared_op.h), after the calls above for the same reason.
  // unimplemented (the default): the bench times the host calls above instead.
  virtual StatusOr<std::unique_ptr<PreparedOp>> prepare(const Case& c, BenchOp op, const OpInputs& in,
                                                        const PrepareOptions& options) {
    (void)c, (void)in, (void)options;
    return unimplemented(std::string(bench_op_name(op)) + " is not prepared by " + name());
  }
  // The ceilings of the device this backend runs on that only it can measure (a GPU's
  // copy and GEMM, a library's own GEMM); the bench measures the host's triad and Eigen
  // GEMM itself. Empty by default.
  virtual StatusOr<std::vector<Ceiling>> measure_ceilings() { return std::vector<Ceiling>{}; }

  // Average pooling (kc/shape.h, AvgPoolGeometry). unimplemented by default: a backend
  // without it is SKIPPED on avgpool cases, with the reason.
  virtual Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) {
    (void)g, (void)x, (void)y;
    return unimplemented("avgpool_forward is not implemented by " + name());
  }
  // dx = dy / divisor spread over each window's input elements, summed where windows overlap.
  virtual Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) {
    (void)g, (void)dy, (void)dx;
    return unimplemented("avgpool_backward is not implemented by " + name());
  }
};

// The oracle as a backend: kc::ref behind the interface, outputs in f64.
std::unique_ptr<Backend> make_reference_backend();

// The same oracle under another name, so that check_case runs every check on it as on a
// candidate (the trust rules of all of them included); it passes every trusted case.
std::unique_ptr<Backend> make_reference_as_candidate(std::string name);

}  // namespace kc
