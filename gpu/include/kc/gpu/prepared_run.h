// PreparedRun: a case's op with its data kept on the device, made from the case alone
// (its fill and seed) for tests and tools that have no OpInputs of their own. It is a
// thin form of the bench's prepared op (kc/prepared_op.h, which the cuda and cudnn
// backends' prepare() return): prepare() makes the inputs and prepares the pass's
// BenchOp (forward: conv_forward, pool_training or pool_inference by the case's mode;
// backward: conv_backward, or pool_backward, which needs maxpool.mode: training;
// avgpool_forward and avgpool_backward for an average pool); run()
// launches only the op's kernels between two CUDA events on the op's own stream.
// More on the method: docs/notes.md, section gpu/include/kc/gpu/prepared_run.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kc/case.h"
#include "kc/prepared_op.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc::gpu {

enum class PreparedPass { kForward, kBackward };

struct PreparedOptions {
  std::string engine = "cuda";  // "cuda" or "cudnn" (the peer)
  PreparedPass pass = PreparedPass::kForward;
  bool deterministic = true;  // weight gradient without float atomics
};

using PreparedOutputs = kc::PreparedOutputs;

// The BenchOp of a pass on a case (failed_precondition: a pool backward of an
// inference-mode case, which keeps no argmax).
StatusOr<BenchOp> bench_op_for(const Case& c, PreparedPass pass);

class PreparedRun {
 public:
  PreparedRun();
  ~PreparedRun();
  PreparedRun(PreparedRun&&) noexcept;
  PreparedRun& operator=(PreparedRun&&) noexcept;

  Status prepare(const Case& c, const PreparedOptions& options = {});
  Status run();                       // launches and waits: seconds() is this run's
  double seconds() const;             // device time of the last run()
  int64_t peak_device_bytes() const;  // MemoryUse::device_peak_bytes of the op
  StatusOr<PreparedOutputs> outputs() const;
  const OpInputs& inputs() const;
  const PreparedOp* op() const;  // null before a successful prepare

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kc::gpu
