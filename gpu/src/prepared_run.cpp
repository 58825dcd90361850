// PreparedRun (prepared_run.h) over an Engine: device buffers for every tensor of the
// case, one pass per run() between CUDA events.
#include "kc/gpu/prepared_run.h"

#include <variant>

#include "engine.h"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/kernels.h"
#include "kc/gpu/pool_shape.h"
#include "kc/shape.h"

namespace kc::gpu {

struct PreparedRun::State {
  std::unique_ptr<Engine> engine;
  PreparedOptions options;
  DType dtype = DType::kF32;
  bool relu = false;
  std::variant<ConvGeometry, PoolGeometry> geometry;
  OpInputs in;
  DeviceBuffer x, w, b, dy, y, dx, dw, db, offsets;
  EventTimer timer;
  double seconds = 0.0;
  int64_t peak = 0;

  bool is_pool() const { return std::holds_alternative<PoolGeometry>(geometry); }
  Status launch();
  Status allocate_conv(const ConvGeometry& g);
  Status allocate_pool(const PoolGeometry& g);
  ConvIO conv_io();
  PoolIO pool_io();
};

namespace {

StatusOr<std::unique_ptr<Engine>> make_engine(const std::string& name) {
  if (name == "cuda") return make_cuda_engine();
#ifdef KC_HAVE_CUDNN
  if (name == "cudnn") return make_cudnn_engine();
#endif
  return not_found("PreparedRun: no engine \"" + name + "\" in this build (cuda" +
#ifdef KC_HAVE_CUDNN
                   std::string(", cudnn)")
#else
                   std::string("; built without cuDNN)")
#endif
  );
}

Status put(DeviceBuffer& buf, const Tensor& t, DType dtype, const std::string& name) {
  const std::vector<unsigned char> bytes = to_device_bytes(t, dtype);
  KC_ASSIGN_OR_RETURN(buf, DeviceBuffer::allocate(static_cast<int64_t>(bytes.size()), name));
  return buf.upload(bytes.data(), static_cast<int64_t>(bytes.size()));
}

Status out(DeviceBuffer& buf, int64_t elements, int bytes, const std::string& name) {
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

}  // namespace

Status PreparedRun::State::allocate_conv(const ConvGeometry& g) {
  const int e = device_bytes(dtype);
  KC_RETURN_IF_ERROR(put(x, in.x, dtype, "x"));
  KC_RETURN_IF_ERROR(put(w, in.w, dtype, "w"));
  if (g.bias) KC_RETURN_IF_ERROR(put(b, in.b, dtype, "b"));
  if (options.pass == PreparedPass::kForward) return out(y, element_count(g.y_shape()), e, "y");
  KC_RETURN_IF_ERROR(put(dy, in.dy, dtype, "dy"));
  KC_RETURN_IF_ERROR(out(dx, element_count(g.x_shape()), e, "dx"));
  KC_RETURN_IF_ERROR(out(dw, element_count(g.w_shape()), e, "dw"));
  return g.bias ? out(db, g.out_channels, e, "db") : ok_status();
}

Status PreparedRun::State::allocate_pool(const PoolGeometry& g) {
  const int e = device_bytes(dtype);
  const int64_t outputs = element_count(g.y_shape());
  KC_RETURN_IF_ERROR(put(x, in.x, dtype, "x"));
  KC_RETURN_IF_ERROR(out(y, outputs, e, "y"));
  if (g.mode == PoolMode::kTraining) {
    KC_RETURN_IF_ERROR(out(offsets, outputs, offset_bytes_for(static_cast<int>(g.spatial.kernel_count())), "offsets"));
  }
  if (options.pass == PreparedPass::kForward) return ok_status();
  if (g.mode != PoolMode::kTraining) {
    return failed_precondition("maxpool backward needs the argmax of a training-mode forward (maxpool.mode: training)");
  }
  KC_RETURN_IF_ERROR(put(dy, in.dy, dtype, "dy"));
  KC_RETURN_IF_ERROR(out(dx, element_count(g.x_shape()), e, "dx"));
  return engine->pool_forward(g, dtype, pool_io());  // the offsets the backward routes by
}

ConvIO PreparedRun::State::conv_io() {
  ConvIO io;
  io.x = x.data();
  io.w = w.data();
  io.b = b ? b.data() : nullptr;
  io.dy = dy ? dy.data() : nullptr;
  io.y = y ? y.data() : nullptr;
  io.dx = dx ? dx.data() : nullptr;
  io.dw = dw ? dw.data() : nullptr;
  io.db = db ? db.data() : nullptr;
  return io;
}

PoolIO PreparedRun::State::pool_io() {
  PoolIO io;
  io.x = x.data();
  io.y = y.data();
  io.offsets = offsets ? offsets.data() : nullptr;
  io.dy = dy ? dy.data() : nullptr;
  io.dx = dx ? dx.data() : nullptr;
  return io;
}

Status PreparedRun::State::launch() {
  const bool fwd = options.pass == PreparedPass::kForward;
  if (const auto* g = std::get_if<ConvGeometry>(&geometry)) {
    return fwd ? engine->conv_forward(*g, dtype, relu, conv_io()) : engine->conv_backward(*g, dtype, relu, conv_io());
  }
  const PoolGeometry& g = std::get<PoolGeometry>(geometry);
  return fwd ? engine->pool_forward(g, dtype, pool_io()) : engine->pool_backward(g, dtype, pool_io());
}

PreparedRun::PreparedRun() = default;
PreparedRun::~PreparedRun() = default;
PreparedRun::PreparedRun(PreparedRun&&) noexcept = default;
PreparedRun& PreparedRun::operator=(PreparedRun&&) noexcept = default;

Status PreparedRun::prepare(const Case& c, const PreparedOptions& options) {
  state_.reset();  // frees the previous case's buffers before the peak restarts
  auto s = std::make_unique<State>();
  s->options = options;
  KC_ASSIGN_OR_RETURN(s->engine, make_engine(options.engine));
  KC_RETURN_IF_ERROR(s->engine->available());
  KC_RETURN_IF_ERROR(s->engine->supports(c));
  s->engine->set_deterministic(options.deterministic);
  s->dtype = c.dtype;
  s->relu = std::holds_alternative<ConvBiasReluParams>(c.op);
  KC_ASSIGN_OR_RETURN(s->in, make_inputs(c));
  reset_device_memory_peak();
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    KC_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(c));
    s->geometry = g;
    KC_RETURN_IF_ERROR(s->allocate_pool(g));
  } else {
    KC_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(c));
    s->geometry = g;
    KC_RETURN_IF_ERROR(s->allocate_conv(g));
  }
  KC_RETURN_IF_ERROR(s->launch());  // warm-up: module load, scratch allocation
  KC_RETURN_IF_ERROR(device_synchronize("PreparedRun warm-up"));
  s->peak = device_memory_stats().peak_bytes;
  state_ = std::move(s);
  return ok_status();
}

Status PreparedRun::run() {
  if (!state_) return failed_precondition("PreparedRun::run before a successful prepare");
  KC_RETURN_IF_ERROR(state_->timer.start());
  KC_RETURN_IF_ERROR(state_->launch());
  KC_RETURN_IF_ERROR(state_->timer.stop());
  KC_ASSIGN_OR_RETURN(state_->seconds, state_->timer.seconds());
  state_->peak = std::max(state_->peak, device_memory_stats().peak_bytes);
  return ok_status();
}

double PreparedRun::seconds() const { return state_ ? state_->seconds : 0.0; }
int64_t PreparedRun::peak_device_bytes() const { return state_ ? state_->peak : 0; }

const OpInputs& PreparedRun::inputs() const {
  static const OpInputs kNone;
  return state_ ? state_->in : kNone;
}

StatusOr<PreparedOutputs> PreparedRun::outputs() const {
  if (!state_) return failed_precondition("PreparedRun::outputs before a successful prepare");
  const State& s = *state_;
  KC_RETURN_IF_ERROR(device_synchronize("PreparedRun outputs"));
  PreparedOutputs o;
  if (const auto* g = std::get_if<ConvGeometry>(&s.geometry)) {
    if (s.y) KC_RETURN_IF_ERROR(get(s.y, s.dtype, g->y_shape(), o.y));
    if (s.dx) KC_RETURN_IF_ERROR(get(s.dx, s.dtype, g->x_shape(), o.dx));
    if (s.dw) KC_RETURN_IF_ERROR(get(s.dw, s.dtype, g->w_shape(), o.dw));
    if (s.db) KC_RETURN_IF_ERROR(get(s.db, s.dtype, g->b_shape(), o.db));
    return o;
  }
  const PoolGeometry& g = std::get<PoolGeometry>(s.geometry);
  KC_RETURN_IF_ERROR(get(s.y, s.dtype, g.y_shape(), o.y));
  if (s.dx) KC_RETURN_IF_ERROR(get(s.dx, s.dtype, g.x_shape(), o.dx));
  if (s.offsets) {
    DeviceBuffer idx;
    KC_ASSIGN_OR_RETURN(idx, DeviceBuffer::allocate(o.y.size() * 8, "indices"));
    const PoolShape ps = pool_shape(g);
    KC_RETURN_IF_ERROR(launch_maxpool_expand_indices(ps, s.offsets.data(), offset_bytes_for(ps.kernel_count()),
                                                     static_cast<int64_t*>(idx.data())));
    IndexTensor t{g.y_shape(), HostVector<int64_t>(static_cast<size_t>(o.y.size()))};
    KC_RETURN_IF_ERROR(idx.download(t.data.data(), o.y.size() * 8));
    o.indices = std::move(t);
  }
  return o;
}

}  // namespace kc::gpu
