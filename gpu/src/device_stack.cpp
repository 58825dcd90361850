// A stack's training step with everything on the device: the checkpoint schedule of
// stack_schedule.h (the one the harness's executor runs) on device buffers through an
// engine, so that the activations, argmax offsets and gradients in flight really occupy
// device memory and their peak is measured (device_buffer.h accounting, guard bands
// included) instead of modelled. Weights, biases, x and dy are uploaded once; dw and
// db are downloaded as each layer's backward produces them, y and dx at the end.
// More on the method: docs/notes.md, section gpu/src/device_stack.cpp.
#include "device_stack.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kc/gpu/device_buffer.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/pool_shape.h"
#include "kc/host_buffer.h"
#include "stack/stack_schedule.h"
#include "transfer.h"

namespace kc::gpu {
namespace {

StatusOr<uint64_t> digest_of(const DeviceBuffer& b) {
  std::vector<unsigned char> host(static_cast<size_t>(b.bytes()));
  KC_RETURN_IF_ERROR(b.download(host.data(), b.bytes()));
  return digest_bytes(host.data(), host.size());
}

// Every layer's w and b still what was uploaded: no call is handed them to write.
Status parameters_intact(const std::vector<DeviceBuffer>& w, const std::vector<DeviceBuffer>& b,
                         const std::vector<uint64_t>& prints) {
  for (size_t l = 0; l < w.size(); ++l) {
    for (const DeviceBuffer* p : {&w[l], &b[l]}) {
      if (!*p) continue;
      const StatusOr<uint64_t> now = digest_of(*p);
      if (!now.ok()) return at_stack_layer(l, now.status().with_context("checking its parameters"));
      if (*now != prints[2 * l + (p == &b[l])]) {
        return at_stack_layer(l, failed_precondition(std::string("its ") + (p == &w[l] ? "weights (w)" : "bias (b)") +
                                                     " changed during the run, and no call was handed them to "
                                                     "write: a kernel wrote into a buffer it was not handed (a "
                                                     "layer's parameters are read-only for the whole step)"));
      }
    }
  }
  return ok_status();
}

class DeviceRuntime {
 public:
  using Value = DeviceBuffer;
  using Indices = DeviceBuffer;  // compact argmax offsets (pool_shape.h)

  DeviceRuntime(Engine& engine, const std::vector<StackLayer>& layers, const StackRunOptions& opt,
                const std::vector<DeviceBuffer>& w, const std::vector<DeviceBuffer>& b, StackRun& run)
      : engine_(engine), layers_(layers), opt_(opt), w_(w), b_(b), run_(run) {
    if (opt.backward) {
      run_.dw.resize(layers_.size());
      run_.db.resize(layers_.size());
      if (opt_.keep_conv_grads) run_.conv_grads.resize(layers_.size());
    }
  }

  Status forward(size_t l, const DeviceBuffer& x, DeviceBuffer& y, std::optional<DeviceBuffer>* keep) {
    return at_stack_layer(l, forward_layer(layers_[l], l, x, y, keep));
  }

  void output(size_t l, const DeviceBuffer& y) {
    if (!opt_.keep_activations || !status_.ok()) return;
    Tensor t = Tensor::zeros(opt_.dtype, layers_[l].out_shape());
    status_ = at_stack_layer(l, download(y, opt_.dtype, t));
    run_.activations.push_back(std::move(t));
  }

  Status backward(size_t l, const DeviceBuffer& x, const DeviceBuffer* argmax, const DeviceBuffer& dy,
                  DeviceBuffer& dx) {
    return at_stack_layer(l, backward_layer(layers_[l], l, x, argmax, dy, dx));
  }

  // A digest of the buffer's bytes (stack_schedule.h). A failed copy is kept in
  // status(), which run_on_device() reports before what the schedule says.
  uint64_t fingerprint(const DeviceBuffer& b) {
    const StatusOr<uint64_t> d = digest_of(b);
    if (d.ok()) return *d;
    if (status_.ok()) status_ = d.status().with_context("fingerprint of a kept " + b.name());
    return 0;
  }

  // A failed download of a kept activation (output() cannot return it), or of a
  // fingerprint.
  const Status& status() const { return status_; }

 private:
  int64_t bytes(const Dims& shape) const { return element_count(shape) * device_bytes(opt_.dtype); }
  const void* bias(size_t l) const { return layers_[l].conv.bias ? b_[l].data() : nullptr; }

  Status forward_layer(const StackLayer& L, size_t l, const DeviceBuffer& x, DeviceBuffer& y,
                       std::optional<DeviceBuffer>* keep) {
    KC_ASSIGN_OR_RETURN(DeviceBuffer z, poisoned(bytes(L.conv.y_shape()), "conv output"));
    ConvIO io;
    io.x = x.data();
    io.w = w_[l].data();
    io.b = bias(l);
    io.y = z.data();
    KC_RETURN_IF_ERROR(engine_.conv_forward(L.conv, opt_.dtype, L.relu, io));
    KC_RETURN_IF_ERROR(finish(engine_, "conv forward", {&x, &w_[l], &b_[l], &z}));
    if (!L.pool) {
      y = std::move(z);
      return ok_status();
    }
    const PoolShape s = pool_shape(*L.pool);
    KC_ASSIGN_OR_RETURN(y, poisoned(bytes(L.pool->y_shape()), "pool output"));
    DeviceBuffer offsets;
    if (keep != nullptr) {
      KC_ASSIGN_OR_RETURN(
          offsets, poisoned(element_count(L.pool->y_shape()) * offset_bytes_for(s.kernel_count()), "argmax offsets"));
    }
    PoolIO pio;
    pio.x = z.data();
    pio.y = y.data();
    pio.offsets = keep != nullptr ? offsets.data() : nullptr;
    KC_RETURN_IF_ERROR(engine_.pool_forward(*L.pool, opt_.dtype, pio));
    KC_RETURN_IF_ERROR(finish(engine_, "maxpool forward", {&z, &y, &offsets}));
    if (keep != nullptr) *keep = std::move(offsets);
    return ok_status();
  }

  Status backward_layer(const StackLayer& L, size_t l, const DeviceBuffer& x, const DeviceBuffer* argmax,
                        const DeviceBuffer& dy, DeviceBuffer& dx) {
    DeviceBuffer dz;
    if (L.pool) {
      if (argmax == nullptr) return internal_error("maxpool backward without the argmax the schedule keeps");
      KC_ASSIGN_OR_RETURN(dz, poisoned(bytes(L.conv.y_shape()), "dz"));
      PoolIO pio;
      pio.dy = dy.data();
      pio.offsets = const_cast<void*>(argmax->data());  // read only: PoolIO has one field for both passes
      pio.dx = dz.data();
      KC_RETURN_IF_ERROR(engine_.pool_backward(*L.pool, opt_.dtype, pio));
      KC_RETURN_IF_ERROR(finish(engine_, "maxpool backward", {&dy, argmax, &dz}));
    }
    const DeviceBuffer& g = L.pool ? dz : dy;
    KC_ASSIGN_OR_RETURN(dx, poisoned(bytes(L.conv.x_shape()), "dx"));
    KC_ASSIGN_OR_RETURN(DeviceBuffer dw, poisoned(bytes(L.conv.w_shape()), "dw"));
    DeviceBuffer db;
    if (L.conv.bias) {
      KC_ASSIGN_OR_RETURN(db, poisoned(bytes(L.conv.b_shape()), "db"));
    }
    ConvIO io;
    io.x = x.data();
    io.w = w_[l].data();
    io.b = bias(l);
    io.dy = g.data();
    io.dx = dx.data();
    io.dw = dw.data();
    io.db = L.conv.bias ? db.data() : nullptr;
    KC_RETURN_IF_ERROR(engine_.conv_backward(L.conv, opt_.dtype, L.relu, io));
    KC_RETURN_IF_ERROR(finish(engine_, "conv backward", {&x, &w_[l], &b_[l], &g, &dx, &dw, &db}));
    run_.dw[l] = Tensor::zeros(opt_.dtype, L.conv.w_shape());
    KC_RETURN_IF_ERROR(download(dw, opt_.dtype, run_.dw[l]));
    if (L.user_bias) {
      run_.db[l] = Tensor::zeros(opt_.dtype, L.conv.b_shape());
      KC_RETURN_IF_ERROR(download(db, opt_.dtype, run_.db[l]));
    }
    if (opt_.keep_conv_grads) {
      run_.conv_grads[l] = Tensor::zeros(opt_.dtype, L.conv.y_shape());
      KC_RETURN_IF_ERROR(download(g, opt_.dtype, run_.conv_grads[l]));
    }
    return ok_status();
  }

  Engine& engine_;
  const std::vector<StackLayer>& layers_;
  const StackRunOptions& opt_;
  const std::vector<DeviceBuffer>& w_;
  const std::vector<DeviceBuffer>& b_;
  StackRun& run_;
  Status status_ = ok_status();
};

Status run_on_device(Engine& engine, const std::vector<StackLayer>& layers, const StackInputs& in,
                     const StackRunOptions& options, StackRun& run) {
  const DType t = options.dtype;
  std::vector<DeviceBuffer> w, b;
  for (size_t l = 0; l < layers.size(); ++l) {
    KC_ASSIGN_OR_RETURN(DeviceBuffer wl, upload(in.w[l], t, "w of layer " + std::to_string(l + 1)));
    DeviceBuffer bl;
    if (layers[l].conv.bias) {
      KC_ASSIGN_OR_RETURN(bl, upload(in.b[l], t, "b of layer " + std::to_string(l + 1)));
    }
    w.push_back(std::move(wl));
    b.push_back(std::move(bl));
  }
  std::vector<uint64_t> prints(2 * layers.size(), 0);
  for (size_t l = 0; l < layers.size(); ++l) {
    KC_ASSIGN_OR_RETURN(prints[2 * l], digest_of(w[l]));
    if (b[l]) {
      KC_ASSIGN_OR_RETURN(prints[2 * l + 1], digest_of(b[l]));
    }
  }
  DeviceBuffer g;
  if (options.backward) {
    KC_ASSIGN_OR_RETURN(g, upload(in.dy, t, "dy"));
  }
  // Everything from here on is the step's own memory: x is the first layer's record,
  // and the engine's workspace grows back from nothing whatever ran before.
  engine.release_scratch();
  const int64_t base = device_memory_stats().current_bytes;
  reset_device_memory_peak();
  KC_ASSIGN_OR_RETURN(DeviceBuffer x, upload(in.x, t, "x"));
  DeviceRuntime rt(engine, layers, options, w, b, run);
  StackSchedule<DeviceRuntime> schedule(rt, layers, options, run);
  DeviceBuffer y;
  const Status scheduled = schedule.run(std::move(x), y, g);
  KC_RETURN_IF_ERROR(rt.status());
  KC_RETURN_IF_ERROR(scheduled);
  KC_RETURN_IF_ERROR(parameters_intact(w, b, prints));
  run.measured_peak_bytes = device_memory_stats().peak_bytes - base;
  run.y = Tensor::zeros(t, layers.back().out_shape());
  KC_RETURN_IF_ERROR(download(y, t, run.y));
  if (options.backward) {
    run.dx = Tensor::zeros(t, layers.front().in_shape());
    KC_RETURN_IF_ERROR(download(g, t, run.dx));
  }
  return ok_status();
}

}  // namespace

static_assert(FingerprintingRuntime<DeviceRuntime>);

StackRun run_device_stack(Engine& engine, const std::vector<StackLayer>& layers, const StackInputs& in,
                          const StackRunOptions& options) {
  StackRun run;
  if (layers.empty() || in.w.size() != layers.size() || in.b.size() != layers.size()) {
    run.status = invalid_argument("a stack run needs one weight and one bias slot per layer");
    return run;
  }
  run.status = run_on_device(engine, layers, in, options, run);
  return run;
}

}  // namespace kc::gpu
