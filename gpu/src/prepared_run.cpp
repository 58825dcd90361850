// PreparedRun (prepared_run.h): the case's inputs made here, the op prepared by
// prepare_device_op like any backend's prepare().
#include "kc/gpu/prepared_run.h"

#include "core/fill.h"
#include "device_prepared_op.h"
#include "engine.h"

namespace kc::gpu {

struct PreparedRun::State {
  OpInputs in;
  std::unique_ptr<PreparedOp> op;
  double seconds = 0.0;
};

StatusOr<BenchOp> bench_op_for(const Case& c, PreparedPass pass) {
  const bool forward = pass == PreparedPass::kForward;
  if (std::holds_alternative<AvgPoolParams>(c.op))
    return forward ? BenchOp::kAvgPoolForward : BenchOp::kAvgPoolBackward;
  const auto* pool = std::get_if<MaxPoolParams>(&c.op);
  if (pool == nullptr) return forward ? BenchOp::kConvForward : BenchOp::kConvBackward;
  const bool training = pool->mode == PoolMode::kTraining;
  if (forward) return training ? BenchOp::kPoolTraining : BenchOp::kPoolInference;
  if (!training) {
    return failed_precondition("maxpool backward needs the argmax of a training-mode forward (maxpool.mode: training)");
  }
  return BenchOp::kPoolBackward;
}

PreparedRun::PreparedRun() = default;
PreparedRun::~PreparedRun() = default;
PreparedRun::PreparedRun(PreparedRun&&) noexcept = default;
PreparedRun& PreparedRun::operator=(PreparedRun&&) noexcept = default;

Status PreparedRun::prepare(const Case& c, const PreparedOptions& options) {
  state_.reset();  // frees the previous case's buffers before the peak restarts
  auto s = std::make_unique<State>();
  KC_ASSIGN_OR_RETURN(BenchOp op, bench_op_for(c, options.pass));
  KC_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, make_engine(options.engine));
  KC_RETURN_IF_ERROR(engine->available());
  KC_RETURN_IF_ERROR(engine->supports(c));
  KC_ASSIGN_OR_RETURN(s->in, make_inputs(c));
  PrepareOptions po;
  po.deterministic = options.deterministic;
  KC_ASSIGN_OR_RETURN(s->op, prepare_device_op(std::move(engine), c, op, s->in, po));
  state_ = std::move(s);
  return ok_status();
}

Status PreparedRun::run() {
  if (!state_) return failed_precondition("PreparedRun::run before a successful prepare");
  KC_RETURN_IF_ERROR(state_->op->run());
  KC_RETURN_IF_ERROR(state_->op->synchronize());
  const std::optional<double> t = state_->op->last_seconds();
  if (!t) return internal_error("PreparedRun: the op's CUDA events gave no time");
  state_->seconds = *t;
  return ok_status();
}

double PreparedRun::seconds() const { return state_ ? state_->seconds : 0.0; }

int64_t PreparedRun::peak_device_bytes() const { return state_ ? state_->op->memory().device_peak_bytes : 0; }

const OpInputs& PreparedRun::inputs() const {
  static const OpInputs kNone;
  return state_ ? state_->in : kNone;
}

const PreparedOp* PreparedRun::op() const { return state_ ? state_->op.get() : nullptr; }

StatusOr<PreparedOutputs> PreparedRun::outputs() const {
  if (!state_) return failed_precondition("PreparedRun::outputs before a successful prepare");
  return state_->op->outputs();
}

}  // namespace kc::gpu
