// PreparedRun: a case's op with its data kept on the device, for benchmarks (DESIGN
// section 8). prepare() makes the case's inputs (its fill and seed), uploads them once,
// allocates outputs and scratch and runs the pass once untimed (warm-up; for a pool
// backward, the training forward that leaves the argmax offsets on the device). Each
// run() then launches only the pass's kernels between two CUDA events; seconds() is
// that device time. outputs() downloads the current results, so a benchmark re-checks
// correctness after its timing loop.
// More on the method: docs/notes.md, section gpu/include/kc/gpu/prepared_run.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/fill.h"
#include "kc/case.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc::gpu {

enum class PreparedPass { kForward, kBackward };

struct PreparedOptions {
  std::string engine = "cuda";  // "cuda" or "cudnn" (the peer)
  PreparedPass pass = PreparedPass::kForward;
  bool deterministic = true;  // weight gradient without float atomics
};

struct PreparedOutputs {
  Tensor y;                            // forward
  std::optional<IndexTensor> indices;  // forward of a training-mode pool
  Tensor dx, dw, db;                   // backward (dw, db: conv; db with a bias)
};

class PreparedRun {
 public:
  PreparedRun();
  ~PreparedRun();
  PreparedRun(PreparedRun&&) noexcept;
  PreparedRun& operator=(PreparedRun&&) noexcept;

  Status prepare(const Case& c, const PreparedOptions& options = {});
  Status run();
  double seconds() const;
  int64_t peak_device_bytes() const;
  StatusOr<PreparedOutputs> outputs() const;
  const OpInputs& inputs() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kc::gpu
