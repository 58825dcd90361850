// The backend interface (docs/plugins.md). A backend runs the ops of a case on host
// tensors; a GPU backend copies in and out internally. No exception crosses this
// interface: errors are Status values.
//
// Calling contract, which the integrity check enforces:
// More on the method: docs/notes.md, section harness/include/kc/backend.h.
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
};

// The oracle as a backend: kc::ref behind the interface, outputs in f64.
std::unique_ptr<Backend> make_reference_backend();

// The same oracle under another name, so that check_case runs every check on it as on a
// candidate (the trust rules of all of them included); it passes every trusted case.
std::unique_ptr<Backend> make_reference_as_candidate(std::string name);

}  // namespace kc
