// The host adapter that turns an Engine into a kc::Backend: upload the inputs in the
// case's storage dtype, allocate outputs poisoned with NaN (0xFF bytes are NaN in f32,
// f16 and bf16; an all-ones offset is the "never written" sentinel), run, wait, check
// every buffer's guard bands, download. Inputs are copies, so they cannot change. A
// stack runs whole on the device instead (device_stack.h); the bench's ops are prepared
// on a fresh engine of the same kind (device_prepared_op.h), the ceilings measured by
// gpu_ceilings.h.
#include "device_prepared_op.h"
#include "device_stack.h"
#include "engine.h"
#include "kc/gpu/backends.h"
#include "kc/gpu/ceilings.h"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/kernels.h"
#include "kc/gpu/pool_shape.h"
#include "transfer.h"

namespace kc::gpu {
namespace {

class DeviceBackend final : public Backend, public ResidentStackRunner {
 public:
  explicit DeviceBackend(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}

  std::string name() const override { return engine_->name(); }
  Status available() const override { return engine_->available(); }
  Status supports(const Case& c) const override {
    engine_->set_deterministic(c.deterministic);  // see backends.h
    return engine_->supports(c);
  }

  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override;
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override;
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override;
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override;
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override;
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override;

  StatusOr<std::unique_ptr<PreparedOp>> prepare(const Case& c, BenchOp op, const OpInputs& in,
                                                const PrepareOptions& options) override {
    KC_RETURN_IF_ERROR(ready(c.dtype));
    KC_RETURN_IF_ERROR(engine_->supports(c));
    KC_ASSIGN_OR_RETURN(std::unique_ptr<Engine> fresh, make_engine(engine_->name()));
    return prepare_device_op(std::move(fresh), c, op, in, options);
  }
  StatusOr<std::vector<Ceiling>> measure_ceilings() override {
    KC_RETURN_IF_ERROR(engine_->available());
    return measure_gpu_ceilings();
  }

  // The stack's step on the device (device_stack.h), its device memory measured.
  StackRun run_stack_resident(const std::vector<StackLayer>& layers, const StackInputs& in,
                              const StackRunOptions& options) override {
    if (Status s = ready(options.dtype); !s.ok()) {
      StackRun run;
      run.status = s;
      return run;
    }
    return run_device_stack(*engine_, layers, in, options);
  }

 private:
  Status ready(DType dtype) const {
    KC_RETURN_IF_ERROR(engine_->available());
    if (device_bytes(dtype) == 0) {
      return unimplemented("f64 storage: " + engine_->name() + " runs f32, f16 and bf16");
    }
    return ok_status();
  }

  std::unique_ptr<Engine> engine_;
};

Status DeviceBackend::conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                                   Tensor& y) {
  const DType t = x.dtype;
  KC_RETURN_IF_ERROR(ready(t));
  KC_ASSIGN_OR_RETURN(DeviceBuffer x_in, upload(x, t, "x"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer w_in, upload(w, t, "w"));
  DeviceBuffer b_in;
  if (b != nullptr) {
    KC_ASSIGN_OR_RETURN(b_in, upload(*b, t, "b"));
  }
  KC_ASSIGN_OR_RETURN(DeviceBuffer y_out, output_for(y, t, "y"));
  ConvIO io;
  io.x = x_in.data();
  io.w = w_in.data();
  io.b = b ? b_in.data() : nullptr;
  io.y = y_out.data();
  KC_RETURN_IF_ERROR(engine_->conv_forward(g, t, relu, io));
  KC_RETURN_IF_ERROR(finish(*engine_, "conv forward", {&x_in, &w_in, &b_in, &y_out}));
  return download(y_out, t, y);
}

Status DeviceBackend::conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                                    const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) {
  const DType t = x.dtype;
  KC_RETURN_IF_ERROR(ready(t));
  KC_ASSIGN_OR_RETURN(DeviceBuffer x_in, upload(x, t, "x"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer w_in, upload(w, t, "w"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer dy_in, upload(dy, t, "dy"));
  DeviceBuffer b_in, db_out;
  if (b != nullptr) {
    KC_ASSIGN_OR_RETURN(b_in, upload(*b, t, "b"));
  }
  KC_ASSIGN_OR_RETURN(DeviceBuffer dx_out, output_for(dx, t, "dx"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer dw_out, output_for(dw, t, "dw"));
  if (db != nullptr) {
    KC_ASSIGN_OR_RETURN(db_out, output_for(*db, t, "db"));
  }
  ConvIO io;
  io.x = x_in.data();
  io.w = w_in.data();
  io.b = b ? b_in.data() : nullptr;
  io.dy = dy_in.data();
  io.dx = dx_out.data();
  io.dw = dw_out.data();
  io.db = db ? db_out.data() : nullptr;
  KC_RETURN_IF_ERROR(engine_->conv_backward(g, t, relu, io));
  KC_RETURN_IF_ERROR(finish(*engine_, "conv backward", {&x_in, &w_in, &dy_in, &b_in, &dx_out, &dw_out, &db_out}));
  KC_RETURN_IF_ERROR(download(dx_out, t, dx));
  KC_RETURN_IF_ERROR(download(dw_out, t, dw));
  return db ? download(db_out, t, *db) : ok_status();
}

Status DeviceBackend::maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) {
  const DType t = x.dtype;
  KC_RETURN_IF_ERROR(ready(t));
  const PoolShape s = pool_shape(g);
  const int bytes = offset_bytes_for(s.kernel_count());
  KC_ASSIGN_OR_RETURN(DeviceBuffer x_in, upload(x, t, "x"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer y_out, output_for(y, t, "y"));
  DeviceBuffer offsets, idx_out;
  if (indices != nullptr) {
    KC_ASSIGN_OR_RETURN(offsets, poisoned(y.size() * bytes, "argmax offsets"));  // 0xFF..: sentinel
    KC_ASSIGN_OR_RETURN(idx_out, poisoned(y.size() * 8, "indices"));
  }
  PoolIO io;
  io.x = x_in.data();
  io.y = y_out.data();
  io.offsets = indices ? offsets.data() : nullptr;
  KC_RETURN_IF_ERROR(engine_->pool_forward(g, t, io));
  if (indices != nullptr) {
    KC_RETURN_IF_ERROR(launch_maxpool_expand_indices(s, offsets.data(), bytes, static_cast<int64_t*>(idx_out.data())));
  }
  KC_RETURN_IF_ERROR(finish(*engine_, "maxpool forward", {&x_in, &y_out, &offsets, &idx_out}));
  if (indices != nullptr) {
    indices->data.resize(static_cast<size_t>(y.size()));
    KC_RETURN_IF_ERROR(idx_out.download(indices->data.data(), y.size() * 8));
  }
  return download(y_out, t, y);
}

Status DeviceBackend::maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices,
                                       Tensor& dx) {
  if (indices == nullptr) {
    return failed_precondition(
        "maxpool backward needs the argmax indices of a training-mode forward; an inference-mode forward "
        "keeps none (set maxpool.mode: training)");
  }
  const DType t = dy.dtype;
  KC_RETURN_IF_ERROR(ready(t));
  const PoolShape s = pool_shape(g);
  const int bytes = offset_bytes_for(s.kernel_count());
  if (indices->size() != dy.size()) {
    return invalid_argument("maxpool backward: " + std::to_string(indices->size()) + " indices for " +
                            std::to_string(dy.size()) + " outputs");
  }
  KC_ASSIGN_OR_RETURN(DeviceBuffer dy_in, upload(dy, t, "dy"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer idx_in, DeviceBuffer::allocate(indices->size() * 8, "indices"));
  KC_RETURN_IF_ERROR(idx_in.upload(indices->data.data(), indices->size() * 8));
  KC_ASSIGN_OR_RETURN(DeviceBuffer offsets, poisoned(dy.size() * bytes, "argmax offsets"));
  KC_RETURN_IF_ERROR(
      launch_maxpool_compress_indices(s, static_cast<const int64_t*>(idx_in.data()), offsets.data(), bytes));
  KC_ASSIGN_OR_RETURN(DeviceBuffer dx_out, output_for(dx, t, "dx"));
  PoolIO io;
  io.dy = dy_in.data();
  io.offsets = offsets.data();
  io.dx = dx_out.data();
  KC_RETURN_IF_ERROR(engine_->pool_backward(g, t, io));
  KC_RETURN_IF_ERROR(finish(*engine_, "maxpool backward", {&dy_in, &idx_in, &offsets, &dx_out}));
  return download(dx_out, t, dx);
}

Status DeviceBackend::avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) {
  const DType t = x.dtype;
  KC_RETURN_IF_ERROR(ready(t));
  KC_ASSIGN_OR_RETURN(DeviceBuffer x_in, upload(x, t, "x"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer y_out, output_for(y, t, "y"));
  PoolIO io;
  io.x = x_in.data();
  io.y = y_out.data();
  KC_RETURN_IF_ERROR(engine_->avgpool_forward(g, t, io));
  KC_RETURN_IF_ERROR(finish(*engine_, "avgpool forward", {&x_in, &y_out}));
  return download(y_out, t, y);
}

Status DeviceBackend::avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) {
  const DType t = dy.dtype;
  KC_RETURN_IF_ERROR(ready(t));
  KC_ASSIGN_OR_RETURN(DeviceBuffer dy_in, upload(dy, t, "dy"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer dx_out, output_for(dx, t, "dx"));
  PoolIO io;
  io.dy = dy_in.data();
  io.dx = dx_out.data();
  KC_RETURN_IF_ERROR(engine_->avgpool_backward(g, t, io));
  KC_RETURN_IF_ERROR(finish(*engine_, "avgpool backward", {&dy_in, &dx_out}));
  return download(dx_out, t, dx);
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<DeviceBackend>(make_cuda_engine(true)); }
std::unique_ptr<Backend> make_cuda_direct_backend() { return std::make_unique<DeviceBackend>(make_cuda_engine(false)); }

#ifdef KC_HAVE_CUDNN
std::unique_ptr<Backend> make_cudnn_backend() { return std::make_unique<DeviceBackend>(make_cudnn_engine()); }
#endif

}  // namespace kc::gpu
