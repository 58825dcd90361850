// What a backend offers `kcheck bench` (docs/bench.md, "What is timed"): one op of a case
// prepared once (inputs on the device for a GPU, primitives and workspace made), then
// run one launch at a time and synchronized, so that the harness times it, and the
// ceilings of the hardware it runs on, measured in the same run.
//
// Invariants: run() reads only what prepare() made and writes the same outputs each
// time; outputs() gives the last run's results on the host, so the bench re-checks what
// it timed. A backend that implements neither is still timed: the harness wraps its host
// calls (bench/host_prepared.h).
// More on the method: docs/bench.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kc/dtype.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

// The ops a case has. A conv_bias_relu case's forward and backward are the fused ones.
enum class BenchOp {
  kConvForward,         // y (conv, conv_bias_relu)
  kConvBackward,        // dx, dw and db in one call (the host interface's conv_backward)
  kConvBackwardData,    // dx alone
  kConvBackwardWeight,  // dw alone
  kConvBackwardBias,    // db alone (a reduction of dy)
  kPoolInference,       // y, no indices kept
  kPoolTraining,        // y and the argmax indices
  kPoolBackward,        // dx from dy through indices made once by prepare()
  kAvgPoolForward,      // average pooling's y
  kAvgPoolBackward,     // average pooling's dx
};

// "conv_forward", "conv_backward", "conv_backward_data", "conv_backward_weight",
// "conv_backward_bias", "pool_inference", "pool_training", "pool_backward",
// "avgpool_forward", "avgpool_backward".
constexpr std::string_view bench_op_name(BenchOp op) {
  switch (op) {
    case BenchOp::kConvForward:
      return "conv_forward";
    case BenchOp::kConvBackward:
      return "conv_backward";
    case BenchOp::kConvBackwardData:
      return "conv_backward_data";
    case BenchOp::kConvBackwardWeight:
      return "conv_backward_weight";
    case BenchOp::kConvBackwardBias:
      return "conv_backward_bias";
    case BenchOp::kPoolInference:
      return "pool_inference";
    case BenchOp::kPoolTraining:
      return "pool_training";
    case BenchOp::kPoolBackward:
      return "pool_backward";
    case BenchOp::kAvgPoolForward:
      return "avgpool_forward";
    case BenchOp::kAvgPoolBackward:
      return "avgpool_backward";
  }
  return "unknown";
}

// Whether the op makes a forward's outputs (y, indices) rather than gradients.
constexpr bool bench_op_forward(BenchOp op) {
  return op == BenchOp::kConvForward || op == BenchOp::kPoolInference || op == BenchOp::kPoolTraining ||
         op == BenchOp::kAvgPoolForward;
}

struct PrepareOptions {
  // Weight gradient summed in a fixed order. false asks for the backend's faster
  // variant with float atomics, where it has one (unimplemented where it has not).
  bool deterministic = true;
};

// The last run's results on the host, in the case's dtype; only what the op writes is
// set (indices: for pool_backward, the ones prepare() made and dx was routed by).
struct PreparedOutputs {
  Tensor y;
  std::optional<IndexTensor> indices;
  Tensor dx, dw, db;
};

struct MemoryUse {
  int64_t held_bytes = 0;          // inputs, outputs and indices the op holds
  int64_t workspace_bytes = 0;     // scratch the op holds beyond them
  int64_t device_peak_bytes = -1;  // measured on the device over prepare() and the runs; -1: not measured
};

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  // Launches the op once (it may return before the op ends on a device).
  virtual Status run() = 0;
  // Waits until every launched run has ended.
  virtual Status synchronize() { return ok_status(); }
  // The last run's own time in seconds, when the backend measures it (CUDA events on
  // its stream); none: the harness times run() and synchronize() on the host clock.
  virtual std::optional<double> last_seconds() const { return std::nullopt; }
  virtual StatusOr<PreparedOutputs> outputs() const = 0;
  virtual MemoryUse memory() const { return {}; }
  // What the backend chose, for the report ("CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM").
  virtual std::string algorithm() const { return {}; }
  // Where it runs: "cpu", or "gpu" (ceilings are matched by it).
  virtual std::string device() const { return "cpu"; }
  // The last-level cache of that device in bytes (0: the host's, read by the harness).
  virtual int64_t cache_bytes() const { return 0; }
};

// A ceiling of the hardware: the best FLOP/s of a GEMM in a dtype, or the best bytes/s
// of a copy or triad. The bench takes the best of several runs (a ceiling is the most
// the hardware gave, not a typical time).
struct Ceiling {
  std::string name;            // "eigen gemm f64", "cublas gemm bf16", "d2d copy"
  std::string device = "cpu";  // as PreparedOp::device
  bool flops = true;           // FLOP/s; false: bytes/s
  std::optional<DType> dtype;  // a GEMM's inputs
  double per_second = 0.0;     // FLOP/s or bytes/s
  std::string detail;          // the size measured and how ("4096^3, best of 5")
};

}  // namespace kc
