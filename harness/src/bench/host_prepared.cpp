#include "bench/host_prepared.h"
#include "kc/overloaded.h"

namespace kc::bench {
namespace {

class HostPreparedOp final : public PreparedOp {
 public:
  HostPreparedOp(Backend& be, const Case& c, const OpGeometry& g, BenchOp op, const OpInputs& in)
      : be_(be), relu_(op_traits(c).relu), g_(g), op_(op), in_(in) {}

  Status allocate(DType dtype);
  Status run() override;
  StatusOr<PreparedOutputs> outputs() const override { return out_; }
  MemoryUse memory() const override;

 private:
  const ConvGeometry& conv() const { return std::get<ConvGeometry>(g_); }
  const PoolGeometry& pool() const { return std::get<PoolGeometry>(g_); }
  const AvgPoolGeometry& avgpool() const { return std::get<AvgPoolGeometry>(g_); }
  const Tensor* bias() const { return conv().bias ? &in_.b : nullptr; }

  Backend& be_;
  bool relu_;
  OpGeometry g_;
  BenchOp op_;
  OpInputs in_;
  PreparedOutputs out_;
};

Status HostPreparedOp::allocate(DType dtype) {
  if (const auto* ag = std::get_if<AvgPoolGeometry>(&g_)) {
    if (op_ == BenchOp::kAvgPoolForward) out_.y = Tensor::zeros(dtype, ag->y_shape());
    if (op_ == BenchOp::kAvgPoolBackward) out_.dx = Tensor::zeros(dtype, ag->x_shape());
    return ok_status();
  }
  if (const auto* pg = std::get_if<PoolGeometry>(&g_)) {
    out_.y = Tensor::zeros(dtype, pg->y_shape());
    const size_t n = static_cast<size_t>(element_count(pg->y_shape()));
    if (op_ != BenchOp::kPoolInference) out_.indices = IndexTensor{pg->y_shape(), HostVector<int64_t>(n)};
    if (op_ != BenchOp::kPoolBackward) return ok_status();
    out_.dx = Tensor::zeros(dtype, pg->x_shape());
    return be_.maxpool_forward(*pg, in_.x, out_.y, &*out_.indices);  // the indices dx is routed by
  }
  const ConvGeometry& cg = conv();
  if (op_ == BenchOp::kConvForward) {
    out_.y = Tensor::zeros(dtype, cg.y_shape());
    return ok_status();
  }
  out_.dx = Tensor::zeros(dtype, cg.x_shape());
  out_.dw = Tensor::zeros(dtype, cg.w_shape());
  if (cg.bias) out_.db = Tensor::zeros(dtype, cg.b_shape());
  return ok_status();
}

Status HostPreparedOp::run() {
  switch (op_) {
    case BenchOp::kConvForward:
      return be_.conv_forward(conv(), in_.x, in_.w, bias(), relu_, out_.y);
    case BenchOp::kConvBackward:
      return be_.conv_backward(conv(), in_.x, in_.w, bias(), relu_, in_.dy, out_.dx, out_.dw,
                               conv().bias ? &out_.db : nullptr);
    case BenchOp::kPoolInference:
      return be_.maxpool_forward(pool(), in_.x, out_.y, nullptr);
    case BenchOp::kPoolTraining:
      return be_.maxpool_forward(pool(), in_.x, out_.y, &*out_.indices);
    case BenchOp::kPoolBackward:
      return be_.maxpool_backward(pool(), in_.dy, &*out_.indices, out_.dx);
    case BenchOp::kAvgPoolForward:
      return be_.avgpool_forward(avgpool(), in_.x, out_.y);
    case BenchOp::kAvgPoolBackward:
      return be_.avgpool_backward(avgpool(), in_.dy, out_.dx);
    default:
      return unimplemented(std::string(bench_op_name(op_)) + " alone");
  }
}

MemoryUse HostPreparedOp::memory() const {
  MemoryUse m;
  const bool backward =
      op_ == BenchOp::kConvBackward || op_ == BenchOp::kPoolBackward || op_ == BenchOp::kAvgPoolBackward;
  m.held_bytes = storage_size(in_.x) + storage_size(in_.w) + storage_size(in_.b) +
                 (backward ? storage_size(in_.dy) : 0) + storage_size(out_.y) + storage_size(out_.dx) +
                 storage_size(out_.dw) + storage_size(out_.db);
  if (out_.indices) m.held_bytes += out_.indices->size() * static_cast<int64_t>(sizeof(int64_t));
  return m;
}

}  // namespace

int64_t storage_size(const Tensor& t) { return t.size() * storage_bytes(t.dtype); }

StatusOr<std::unique_ptr<PreparedOp>> prepare_host_op(Backend& backend, const Case& c, const OpGeometry& g, BenchOp op,
                                                      const OpInputs& in) {
  const bool pool_op = op == BenchOp::kPoolInference || op == BenchOp::kPoolTraining || op == BenchOp::kPoolBackward;
  const bool avg_op = op == BenchOp::kAvgPoolForward || op == BenchOp::kAvgPoolBackward;
  const bool fits = std::visit(
      Overloaded{[&](const ConvGeometry&) { return !pool_op && !avg_op; }, [&](const PoolGeometry&) { return pool_op; },
                 [&](const AvgPoolGeometry&) { return avg_op; }},
      g);
  if (!fits) return invalid_argument(std::string(bench_op_name(op)) + " is not an op of this case");
  if (op != BenchOp::kConvForward && op != BenchOp::kConvBackward && !pool_op && !avg_op) {
    return unimplemented(std::string(bench_op_name(op)) + " alone: the host calls compute dx, dw and db together");
  }
  auto p = std::make_unique<HostPreparedOp>(backend, c, g, op, in);
  KC_RETURN_IF_ERROR(p->allocate(c.dtype));
  return std::unique_ptr<PreparedOp>(std::move(p));
}

}  // namespace kc::bench
