// DevicePreparedOp (device_prepared_op.h). Buffers per op: conv_forward x w [b] -> y;
// conv_backward x w [b] dy -> dx dw [db]; backward_data w dy -> dx; backward_weight
// x dy -> dw; backward_bias dy -> db; pool_inference x -> y; pool_training x -> y
// offsets; pool_backward dy offsets -> dx (offsets from one training forward);
// avgpool_forward x -> y; avgpool_backward dy -> dx.
// device_peak_bytes is measured over prepare(), whose warm-up allocates all the (grow-
// only) scratch the runs use: the larger growth of the device's used memory
// (cudaMemGetInfo: the library's own allocations too) and of the DeviceBuffer
// bookkeeping's peak (transient buffers too). Not sampled in runs: the bench's cold
// mode prepares other instances between them.
#include "device_prepared_op.h"

#include <algorithm>
#include <variant>

#include "kc/gpu/device_buffer.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/kernels.h"
#include "kc/gpu/pool_shape.h"
#include "kc/gpu/stream.h"
#include "kc/shape.h"

namespace kc::gpu {
namespace {

bool writes_dw(BenchOp op) { return op == BenchOp::kConvBackward || op == BenchOp::kConvBackwardWeight; }
bool is_pool_op(BenchOp op) {
  return op == BenchOp::kPoolInference || op == BenchOp::kPoolTraining || op == BenchOp::kPoolBackward;
}
bool is_avgpool_op(BenchOp op) { return op == BenchOp::kAvgPoolForward || op == BenchOp::kAvgPoolBackward; }

Status put(DeviceBuffer& buf, const Tensor& t, DType dtype, const char* name) {
  const std::vector<unsigned char> bytes = to_device_bytes(t, dtype);
  KC_ASSIGN_OR_RETURN(buf, DeviceBuffer::allocate(static_cast<int64_t>(bytes.size()), name));
  return buf.upload(bytes.data(), static_cast<int64_t>(bytes.size()));
}

Status out(DeviceBuffer& buf, int64_t elements, int bytes, const char* name) {
  KC_ASSIGN_OR_RETURN(buf, DeviceBuffer::allocate(elements * bytes, name));
  return buf.fill(0xFF);  // NaN (or the offset sentinel) until written
}

Status get(const DeviceBuffer& buf, DType dtype, const Dims& shape, Tensor& t) {
  t = Tensor::zeros(dtype, shape);
  std::vector<unsigned char> bytes(static_cast<size_t>(buf.bytes()));
  KC_RETURN_IF_ERROR(buf.download(bytes.data(), buf.bytes()));
  from_device_bytes(bytes.data(), dtype, t);
  return ok_status();
}

class DevicePreparedOp final : public PreparedOp {
 public:
  DevicePreparedOp(std::unique_ptr<Engine> engine, BenchOp op) : engine_(std::move(engine)), op_(op) {}

  Status prepare(const Case& c, const OpInputs& in);
  Status run() override;
  Status synchronize() override { return stream_.synchronize("prepared op"); }
  std::optional<double> last_seconds() const override;
  StatusOr<PreparedOutputs> outputs() const override;
  MemoryUse memory() const override;
  std::string algorithm() const override { return engine_->algorithm(); }
  std::string device() const override { return "gpu"; }
  int64_t cache_bytes() const override { return device_l2_bytes(); }

 private:
  Status allocate_conv(const ConvGeometry& g, const OpInputs& in);
  Status allocate_pool(const PoolGeometry& g, const OpInputs& in);
  Status allocate_avgpool(const AvgPoolGeometry& g, const OpInputs& in);
  Status launch();
  Status launch_conv(const ConvGeometry& g);
  Status launch_pool(const PoolGeometry& g);
  Status launch_avgpool(const AvgPoolGeometry& g);
  Status check_guards() const;
  std::vector<const DeviceBuffer*> buffers() const { return {&x_, &w_, &b_, &dy_, &y_, &dx_, &dw_, &db_, &offsets_}; }
  Status pool_outputs(const PoolGeometry& g, PreparedOutputs& o) const;

  DeviceStream stream_;  // declared first: outlives the engine whose library handle is bound to it
  std::unique_ptr<Engine> engine_;
  BenchOp op_;
  DType dtype_ = DType::kF32;
  bool relu_ = false;
  std::variant<ConvGeometry, PoolGeometry, AvgPoolGeometry> geometry_;
  DeviceBuffer x_, w_, b_, dy_, y_, dx_, dw_, db_, offsets_;
  EventTimer timer_;
  bool timed_ = false;
  int64_t peak_ = -1;
};

Status DevicePreparedOp::allocate_conv(const ConvGeometry& g, const OpInputs& in) {
  const int e = device_bytes(dtype_);
  const bool bias = g.bias;
  switch (op_) {
    case BenchOp::kConvForward:
      KC_RETURN_IF_ERROR(put(x_, in.x, dtype_, "x"));
      KC_RETURN_IF_ERROR(put(w_, in.w, dtype_, "w"));
      if (bias) KC_RETURN_IF_ERROR(put(b_, in.b, dtype_, "b"));
      return out(y_, element_count(g.y_shape()), e, "y");
    case BenchOp::kConvBackward:
      KC_RETURN_IF_ERROR(put(x_, in.x, dtype_, "x"));
      KC_RETURN_IF_ERROR(put(w_, in.w, dtype_, "w"));
      if (bias) KC_RETURN_IF_ERROR(put(b_, in.b, dtype_, "b"));
      if (bias) KC_RETURN_IF_ERROR(out(db_, g.out_channels, e, "db"));
      KC_RETURN_IF_ERROR(out(dw_, element_count(g.w_shape()), e, "dw"));
      break;
    case BenchOp::kConvBackwardData:
      KC_RETURN_IF_ERROR(put(w_, in.w, dtype_, "w"));
      break;
    case BenchOp::kConvBackwardWeight:
      KC_RETURN_IF_ERROR(put(x_, in.x, dtype_, "x"));
      KC_RETURN_IF_ERROR(out(dw_, element_count(g.w_shape()), e, "dw"));
      break;
    case BenchOp::kConvBackwardBias:
      if (!bias) return invalid_argument("conv_backward_bias: the case has no bias");
      KC_RETURN_IF_ERROR(out(db_, g.out_channels, e, "db"));
      break;
    default:
      return invalid_argument(std::string(bench_op_name(op_)) + " is no op of a convolution case");
  }
  KC_RETURN_IF_ERROR(put(dy_, in.dy, dtype_, "dy"));
  if (op_ == BenchOp::kConvBackward || op_ == BenchOp::kConvBackwardData) {
    return out(dx_, element_count(g.x_shape()), e, "dx");
  }
  return ok_status();
}

Status DevicePreparedOp::allocate_pool(const PoolGeometry& g, const OpInputs& in) {
  if (!is_pool_op(op_)) return invalid_argument(std::string(bench_op_name(op_)) + " is no op of a max-pool case");
  const int e = device_bytes(dtype_);
  const int64_t outputs = element_count(g.y_shape());
  KC_RETURN_IF_ERROR(put(x_, in.x, dtype_, "x"));
  KC_RETURN_IF_ERROR(out(y_, outputs, e, "y"));
  if (op_ == BenchOp::kPoolInference) return ok_status();
  const int bytes = offset_bytes_for(static_cast<int>(g.spatial.kernel_count()));
  KC_RETURN_IF_ERROR(out(offsets_, outputs, bytes, "argmax offsets"));
  if (op_ == BenchOp::kPoolTraining) return ok_status();
  KC_RETURN_IF_ERROR(put(dy_, in.dy, dtype_, "dy"));
  KC_RETURN_IF_ERROR(out(dx_, element_count(g.x_shape()), e, "dx"));
  // The training forward, once: the offsets every backward run routes dy by.
  PoolIO io;
  io.x = x_.data();
  io.y = y_.data();
  io.offsets = offsets_.data();
  StreamScope scope(stream_.handle());
  return engine_->pool_forward(g, dtype_, io);
}

Status DevicePreparedOp::allocate_avgpool(const AvgPoolGeometry& g, const OpInputs& in) {
  if (!is_avgpool_op(op_)) {
    return invalid_argument(std::string(bench_op_name(op_)) + " is no op of an average-pool case");
  }
  const int e = device_bytes(dtype_);
  if (op_ == BenchOp::kAvgPoolForward) {
    KC_RETURN_IF_ERROR(put(x_, in.x, dtype_, "x"));
    return out(y_, element_count(g.y_shape()), e, "y");
  }
  KC_RETURN_IF_ERROR(put(dy_, in.dy, dtype_, "dy"));
  return out(dx_, element_count(g.x_shape()), e, "dx");
}

Status DevicePreparedOp::launch_conv(const ConvGeometry& g) {
  ConvIO io;
  io.x = x_ ? x_.data() : nullptr;
  io.w = w_ ? w_.data() : nullptr;
  io.b = b_ ? b_.data() : nullptr;
  io.dy = dy_ ? dy_.data() : nullptr;
  io.y = y_ ? y_.data() : nullptr;
  io.dx = dx_ ? dx_.data() : nullptr;
  io.dw = dw_ ? dw_.data() : nullptr;
  io.db = db_ ? db_.data() : nullptr;
  switch (op_) {
    case BenchOp::kConvForward:
      return engine_->conv_forward(g, dtype_, relu_, io);
    case BenchOp::kConvBackward:
      return engine_->conv_backward(g, dtype_, relu_, io);
    case BenchOp::kConvBackwardData:
      return engine_->conv_backward_data(g, dtype_, io);
    case BenchOp::kConvBackwardWeight:
      return engine_->conv_backward_weight(g, dtype_, io);
    case BenchOp::kConvBackwardBias:
      return engine_->conv_backward_bias(g, dtype_, io);
    default:
      return internal_error("launch_conv: not a conv op");
  }
}

Status DevicePreparedOp::launch_pool(const PoolGeometry& g) {
  PoolIO io;
  io.x = x_.data();
  io.y = y_.data();
  io.offsets = offsets_ ? offsets_.data() : nullptr;
  io.dy = dy_ ? dy_.data() : nullptr;
  io.dx = dx_ ? dx_.data() : nullptr;
  return op_ == BenchOp::kPoolBackward ? engine_->pool_backward(g, dtype_, io) : engine_->pool_forward(g, dtype_, io);
}

Status DevicePreparedOp::launch_avgpool(const AvgPoolGeometry& g) {
  PoolIO io;
  io.x = x_ ? x_.data() : nullptr;
  io.y = y_ ? y_.data() : nullptr;
  io.dy = dy_ ? dy_.data() : nullptr;
  io.dx = dx_ ? dx_.data() : nullptr;
  return op_ == BenchOp::kAvgPoolBackward ? engine_->avgpool_backward(g, dtype_, io)
                                          : engine_->avgpool_forward(g, dtype_, io);
}

Status DevicePreparedOp::launch() {
  StreamScope scope(stream_.handle());
  if (const auto* g = std::get_if<ConvGeometry>(&geometry_)) return launch_conv(*g);
  if (const auto* g = std::get_if<AvgPoolGeometry>(&geometry_)) return launch_avgpool(*g);
  return launch_pool(std::get<PoolGeometry>(geometry_));
}

Status DevicePreparedOp::check_guards() const {
  for (const DeviceBuffer* b : buffers()) KC_RETURN_IF_ERROR(b->check_guards());
  return engine_->check_guards();
}

Status DevicePreparedOp::prepare(const Case& c, const OpInputs& in) {
  dtype_ = c.dtype;
  relu_ = std::holds_alternative<ConvBiasReluParams>(c.op);
  const bool split =
      op_ == BenchOp::kConvBackwardData || op_ == BenchOp::kConvBackwardWeight || op_ == BenchOp::kConvBackwardBias;
  if (relu_ && split) {
    return unimplemented(
        std::string(bench_op_name(op_)) +
        ": a conv_bias_relu case's backward is the fused one (conv_backward), dy routed through relu'");
  }
  const int64_t used_before = device_used_bytes();
  const int64_t held_before = device_memory_stats().current_bytes;
  reset_device_memory_peak();
  KC_ASSIGN_OR_RETURN(stream_, DeviceStream::create());
  KC_RETURN_IF_ERROR(engine_->bind_stream(stream_.handle()));
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    KC_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(c));
    geometry_ = g;
    KC_RETURN_IF_ERROR(allocate_pool(g, in));
  } else if (std::holds_alternative<AvgPoolParams>(c.op)) {
    KC_ASSIGN_OR_RETURN(AvgPoolGeometry g, avgpool_geometry(c));
    geometry_ = g;
    KC_RETURN_IF_ERROR(allocate_avgpool(g, in));
  } else {
    KC_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(c));
    geometry_ = g;
    KC_RETURN_IF_ERROR(allocate_conv(g, in));
  }
  KC_RETURN_IF_ERROR(launch());  // warm-up: module load, algorithm choice, scratch allocation
  KC_RETURN_IF_ERROR(stream_.synchronize("prepared op warm-up"));
  KC_RETURN_IF_ERROR(check_guards());
  const int64_t used_after = device_used_bytes();
  peak_ = device_memory_stats().peak_bytes - held_before;
  if (used_before >= 0 && used_after >= 0) peak_ = std::max(peak_, used_after - used_before);
  return ok_status();
}

Status DevicePreparedOp::run() {
  KC_RETURN_IF_ERROR(timer_.start(stream_.handle()));
  KC_RETURN_IF_ERROR(launch());
  KC_RETURN_IF_ERROR(timer_.stop(stream_.handle()));
  timed_ = true;
  return ok_status();
}

std::optional<double> DevicePreparedOp::last_seconds() const {
  if (!timed_) return std::nullopt;
  StatusOr<double> s = timer_.seconds();  // waits for the stop event
  if (!s.ok()) return std::nullopt;
  return *s;
}

Status DevicePreparedOp::pool_outputs(const PoolGeometry& g, PreparedOutputs& o) const {
  if (y_ && op_ != BenchOp::kPoolBackward) KC_RETURN_IF_ERROR(get(y_, dtype_, g.y_shape(), o.y));
  if (dx_) KC_RETURN_IF_ERROR(get(dx_, dtype_, g.x_shape(), o.dx));
  if (!offsets_) return ok_status();
  const int64_t n = element_count(g.y_shape());
  KC_ASSIGN_OR_RETURN(DeviceBuffer idx, DeviceBuffer::allocate(n * 8, "indices"));
  const PoolShape ps = pool_shape(g);
  KC_RETURN_IF_ERROR(launch_maxpool_expand_indices(ps, offsets_.data(), offset_bytes_for(ps.kernel_count()),
                                                   static_cast<int64_t*>(idx.data())));
  IndexTensor t{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(n))};
  KC_RETURN_IF_ERROR(idx.download(t.data.data(), n * 8));
  o.indices = std::move(t);
  return ok_status();
}

StatusOr<PreparedOutputs> DevicePreparedOp::outputs() const {
  KC_RETURN_IF_ERROR(stream_.synchronize("prepared op outputs"));
  KC_RETURN_IF_ERROR(check_guards());
  PreparedOutputs o;
  if (const auto* g = std::get_if<ConvGeometry>(&geometry_)) {
    if (y_) KC_RETURN_IF_ERROR(get(y_, dtype_, g->y_shape(), o.y));
    if (dx_) KC_RETURN_IF_ERROR(get(dx_, dtype_, g->x_shape(), o.dx));
    if (dw_) KC_RETURN_IF_ERROR(get(dw_, dtype_, g->w_shape(), o.dw));
    if (db_) KC_RETURN_IF_ERROR(get(db_, dtype_, g->b_shape(), o.db));
    return o;
  }
  if (const auto* g = std::get_if<AvgPoolGeometry>(&geometry_)) {
    if (y_) KC_RETURN_IF_ERROR(get(y_, dtype_, g->y_shape(), o.y));
    if (dx_) KC_RETURN_IF_ERROR(get(dx_, dtype_, g->x_shape(), o.dx));
    return o;
  }
  KC_RETURN_IF_ERROR(pool_outputs(std::get<PoolGeometry>(geometry_), o));
  return o;
}

MemoryUse DevicePreparedOp::memory() const {
  MemoryUse m;
  for (const DeviceBuffer* b : buffers()) m.held_bytes += b->bytes();
  m.workspace_bytes = engine_->scratch_bytes();
  m.device_peak_bytes = peak_;
  return m;
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_device_op(std::unique_ptr<Engine> engine, const Case& c, BenchOp op,
                                                        const OpInputs& in, const PrepareOptions& options) {
  if (!options.deterministic && writes_dw(op) && !engine->has_atomic_weight_gradient()) {
    return unimplemented(engine->name() + " has no weight gradient with float atomics (deterministic: false)");
  }
  engine->set_deterministic(options.deterministic);
  engine->set_find_algorithms(true);
  auto p = std::make_unique<DevicePreparedOp>(std::move(engine), op);
  KC_RETURN_IF_ERROR(p->prepare(c, in));
  return std::unique_ptr<PreparedOp>(std::move(p));
}

}  // namespace kc::gpu
